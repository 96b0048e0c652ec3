#!/bin/bash
# cloudlua installed as a tool: `cmake --install` into a temporary prefix, then the
# installed binary runs (-v, a call on its embedded emulator), `man -l` renders the
# manual page, every option of `--help` (the main command's and each sub-command's) is
# in the page and in the bash completion, each sub-command the installed binary
# declares (lua/command_specs.lua) is listed by --help, has its section in the page and
# its case in both completions, the bash completion completes a sub-command, its
# options and a profile name of the config file, the documents and the editors' files
# (LuaLS definitions, luacheckrc) are in place, and the example scripts run from the
# install as docs/scripts.md shows them. Usage: install_test.sh BUILD_DIR
set -euo pipefail
BUILD=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$WORK/usr" >/dev/null
BIN=$WORK/usr/bin/cloudlua
"$BIN" -v | grep -q '^cloudlua [0-9]' || fail "the installed binary does not run"
CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_QUIET_EMULATOR=1 \
  "$BIN" -e 'print(cloud.cluster.update_snapshot{SnapshotName="snap-1"}.snapshot.name)' | grep -qx snap-1 ||
  fail "the installed binary cannot call its emulator"

LC_ALL=C MANWIDTH=200 man -l "$WORK/usr/share/man/man1/cloudlua.1" >"$WORK/man.txt" 2>"$WORK/man.err" ||
  fail "man -l: $(cat "$WORK/man.err")"
grep -q "cloudlua - the cloud platform's APIs as Lua functions" "$WORK/man.txt" || fail "the page has no NAME line"
COMPLETION=$WORK/usr/share/bash-completion/completions/cloudlua
[ -f "$WORK/usr/share/zsh/vendor-completions/_cloudlua" ] || fail "no zsh completion"
[ -f "$WORK/usr/share/doc/cloudlua/cli.md" ] && [ -f "$WORK/usr/share/doc/cloudlua/README.md" ] || fail "no documents"
# The editors' files: the language server's definitions (those the installed binary
# prints) and the luacheck settings, which accept a script using cloudlua's globals.
cmp -s "$WORK/usr/share/cloudlua/types/cloud.lua" <(CLOUDLUA_CONFIG_FILE=/dev/null "$BIN" --lua-definitions) ||
  fail "share/cloudlua/types/cloud.lua is not what --lua-definitions prints"
[ -f "$WORK/usr/share/cloudlua/luacheckrc" ] || fail "no share/cloudlua/luacheckrc"
if command -v luacheck >/dev/null; then
  cp "$WORK/usr/share/cloudlua/luacheckrc" "$WORK/.luacheckrc"
  printf 'test("x", function() expect(cloud.storage.list_buckets{}).to_be_a("table") end)
' >"$WORK/x_test.lua"
  (cd "$WORK" && luacheck -q x_test.lua >/dev/null) || fail "luacheck with the installed luacheckrc refuses cloudlua's globals"
fi

# The sub-commands written in Lua, as the installed binary declares them
# (lua/command_specs.lua): each is in --help's list, has its section in the page, its
# case in the bash and zsh completion, and the bash completion offers it and its options.
NAMES=$(CLOUDLUA_CONFIG_FILE=/dev/null "$BIN" -E -e \
  'for _, c in ipairs(require("cloud.command_specs").commands) do print(c.name) end')
[ -n "$NAMES" ] || fail "the installed binary declares no sub-command"
ZSH=$WORK/usr/share/zsh/vendor-completions/_cloudlua
# Read once: `--help | grep -q` would end cloudlua with SIGPIPE (status 141, a failure
# under pipefail) whenever the help is longer than what one write sends.
HELP=$("$BIN" --help)
for name in $NAMES; do
  grep -qE "^  $name +[A-Z]" <<<"$HELP" || fail "cloudlua --help does not list $name"
  synopsis=$("$BIN" "$name" --help | sed -n 's/^usage: cloudlua \(.*\) \[options\]$/\1/p')
  grep -qxF "   $synopsis" "$WORK/man.txt" || fail "the page has no section '$synopsis'"
  grep -q "^    $name) opts=" "$COMPLETION" || fail "the bash completion has no case for $name"
  grep -q "^  $name) _arguments " "$ZSH" || fail "the zsh completion has no case for $name"
done

# Every option --help lists, as a word of the page and of the completion script.
for cmd in "" serve config test $NAMES; do
  for opt in $("$BIN" $cmd --help | sed -n 's/^  \(-[^ ,]*\)\(, \(-[^ ]*\)\)\{0,1\}.*/\1 \3/p'); do
    grep -qE -- "(^|[ ,(\"])$opt([ ,.)\"]|\$)" "$WORK/man.txt" || fail "the page lacks '$opt' of cloudlua $cmd"
    grep -qE -- "(^|[ \"])$opt([ \"]|\$)" "$COMPLETION" || fail "the bash completion lacks '$opt' of cloudlua $cmd"
  done
done

# What the bash completion offers after `cloudlua con` and `cloudlua --profile p`.
complete_words() {
  (cd "$WORK" && bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cloudlua; echo "${COMPREPLY[*]}"' \
    _ "$COMPLETION" "$@")
}
[ "$(complete_words cloudlua con)" = config ] || fail "bash: cloudlua con -> '$(complete_words cloudlua con)'"
printf '[default]\nregion = jp-east-1\n\n[prod]\nregion = jp-west-1\n' >"$WORK/config"
got=$(CLOUDLUA_CONFIG_FILE=$WORK/config complete_words cloudlua --profile p)
[ "$got" = prod ] || fail "bash: --profile p -> '$got'"
[ "$(complete_words cloudlua serve --po)" = --port ] || fail "bash: serve --po -> '$(complete_words cloudlua serve --po)'"
for name in $NAMES; do
  complete_words cloudlua "$name" | grep -qw -- "$name" || fail "bash: cloudlua $name does not complete to $name"
  offered=" $(complete_words cloudlua "$name" --) "
  for opt in $("$BIN" "$name" --help | sed -n 's/^  \(--[^ ,]*\).*/\1/p'); do
    [[ $offered == *" $opt "* ]] || fail "bash: cloudlua $name -- does not offer $opt"
  done
done
# An option's value that is no file gets no file names (--max-delete N was once missing).
touch "$WORK/afile"
[ -z "$(complete_words cloudlua sync --max-delete '')" ] || fail "bash: sync --max-delete offers files"
# --output's values are the ones of the command it follows.
[ "$(complete_words cloudlua sync --output '')" = "text json" ] || fail "bash: sync --output offers $(complete_words cloudlua sync --output '')"
[ "$(complete_words cloudlua test --output '')" = "tap junit json" ] || fail "bash: test --output offers $(complete_words cloudlua test --output '')"
[ "$(complete_words cloudlua --output '')" = "text json json-meta" ] || fail "bash: --output offers $(complete_words cloudlua --output '')"
# The example scripts and their lib, installed in share/cloudlua/scripts, run from the
# install outside a clone exactly as the installed scripts.md shows them: each command
# of its first example (`$ cloudlua scripts/...`), run in an empty folder on the
# embedded emulator, prints the lines under it; the installed path runs too.
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
for f in "$SOURCE"/scripts/*.lua "$SOURCE"/scripts/lib/*.lua; do
  cmp -s "$f" "$WORK/usr/share/cloudlua/${f#"$SOURCE"/}" || fail "${f#"$SOURCE"/} is not installed in share/cloudlua"
done
mkdir "$WORK/elsewhere"
in_install() { (cd "$WORK/elsewhere" && PATH=$WORK/usr/bin:$PATH HOME=$WORK/elsewhere CLOUDLUA_CONFIG_FILE=/dev/null \
  CLOUDLUA_QUIET_EMULATOR=1 bash -c "$1" 2>&1); }
examples=$(awk '/^```sh$/ { n++; next } /^```$/ { if (n == 1) exit } n == 1' "$WORK/usr/share/doc/cloudlua/scripts.md")
commands=$(grep -c '^\$ cloudlua scripts/' <<<"$examples") || fail "scripts.md's first example runs no 'cloudlua scripts/...'"
while IFS= read -r line; do
  [[ $line == '$ '* ]] || continue
  want=$(awk -v c="$line" '$0 == c { on = 1; next } /^\$ / { on = 0 } on' <<<"$examples")
  got=$(in_install "${line#\$ }") || fail "'${line#\$ }' from the install: $got"
  [ "$got" = "$want" ] || fail "'${line#\$ }' from the install printed:
$got
scripts.md shows:
$want"
done <<<"$examples"
got=$(in_install "cloudlua $WORK/usr/share/cloudlua/scripts/open_firewall.lua fw-1 203.0.113.0/24 --no-wait") ||
  fail "the installed open_firewall.lua by its path: $got"
grep -q "opened TCP 443" <<<"$got" || fail "the installed open_firewall.lua by its path printed: $got"
echo "ok: installed binary, man page, completions, documents and scripts ($commands commands of scripts.md)"
