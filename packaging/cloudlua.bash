# bash completion for cloudlua: options, sub-commands, option values and the profile
# names of the config file. tests/install/install_test.sh checks that every option of
# `cloudlua --help` (and of each sub-command's) is offered.

# The [profile] headers of the config file cloudlua reads.
_cloudlua_profiles() {
  local file=${CLOUDLUA_CONFIG_FILE-${XDG_CONFIG_HOME:-$HOME/.config}/cloudlua/config}
  [ -n "$file" ] && [ -r "$file" ] && sed -n 's/^[[:space:]]*\[\([^]]*\)\][[:space:]]*$/\1/p' "$file"
}

_cloudlua() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub="" w
  local config="--profile --region --endpoint --dialect --access-key --secret-key --record --replay --help"
  case $prev in
    --profile) COMPREPLY=($(compgen -W "$(_cloudlua_profiles)" -- "$cur")); return ;;
    --output) COMPREPLY=($(compgen -W "text json json-meta" -- "$cur")); return ;;
    --exclude|--include|--concurrency|--part-size|--shard|--limit-rate|--content-type|--cache-control|--metadata) return ;;
    --dialect) COMPREPLY=($(compgen -W "ext aws any" -- "$cur")); return ;;
    --state|--junit) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --record|--replay) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    -e|-l|--region|--endpoint|--access-key|--secret-key|--port|--host|--filter|--seed|-j|--jobs|--timeout) return ;;
  esac
  for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case $w in serve|config|test|sync|check|cp|ls|rm|cat|mb|rb) sub=$w; break ;; esac
  done
  local opts
  case $sub in
    serve) opts="--port --host --dialect --access-key --secret-key --region --profile --state --restore --settle --min-part-size --help" ;;
    config) opts=$config ;;
    test) opts="--filter --tags --exclude-tags --shard --timings --merge-junit --list --junit --seed -j --jobs --timeout --update-snapshots $config" ;;
    sync) opts="--delete --delete-all --max-delete --dry-run --exclude --include --checksum --size-only --concurrency --part-size --shard --output --verbose --progress --quiet --limit-rate --content-type --cache-control --metadata -h --debug $config" ;;
    check) opts="--size-only --exclude --include --output --quiet -h --debug $config" ;;
    cp) opts="--recursive --dry-run --exclude --include --concurrency --part-size --output --progress --quiet --limit-rate --content-type --cache-control --metadata -h --debug $config" ;;
    ls) opts="--recursive --human-readable --summarize --output --quiet -h --debug $config" ;;
    rm) opts="--recursive --dry-run --exclude --include --output --quiet -h --debug $config" ;;
    cat) opts="--part-size --limit-rate -h --debug $config" ;;
    mb) opts="--output --quiet -h --debug $config" ;;
    rb) opts="--force --dry-run --output --quiet -h --debug $config" ;;
    *) opts="-e -l -i -v --version -E -W --output --debug --keep-going --lua-definitions $config -h - --" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [ -z "$sub" ]; then
    COMPREPLY=($(compgen -W "serve config test sync check cp ls rm cat mb rb" -- "$cur") $(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _cloudlua cloudlua
