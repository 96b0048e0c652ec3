#!/bin/bash
# The REPL's Tab completion through a real terminal: tmux (a private server, -S, no
# configuration) runs `cloudlua` with no arguments in an 80-column pane, keys are typed
# into it, and the screen is read back with capture-pane. Checked: a field nested in an
# operation's argument completes from the model (`ta` inside update_snapshot's
# `snapshot` becomes `tags`, never the global `table`), a library function's options
# table completes its option (cloud.wait_for's `max_attempts`), and a long list of
# candidates is laid out in columns narrower than the pane, no candidate split across
# two rows. Each wait polls the screen until the expected text shows, a bounded number
# of times. Skipped (77) without tmux, but for a failure under CLOUDLUA_REQUIRE_INTEROP=1
# (./setup.sh test, which installs tmux as it installs the peers). Usage: tmux_test.sh
# CLOUDLUA_BINARY
set -euo pipefail
BIN=$1
if ! command -v tmux >/dev/null; then
  [ "${CLOUDLUA_REQUIRE_INTEROP:-0}" = 1 ] && { echo "FAIL: tmux not found (./setup.sh test installs it)" >&2; exit 1; }
  echo "skipped: no tmux"
  exit 77
fi
WORK=$(mktemp -d)
tmux_() { tmux -S "$WORK/tmux" -f /dev/null "$@"; }  # a server of its own, its socket in WORK
trap 'tmux_ kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT
fail() { printf 'FAIL: %s\nthe screen:\n%s\n' "$1" "$(tmux_ capture-pane -p -t repl 2>/dev/null)" >&2; exit 1; }

# The REPL, isolated: no config file, HOME and the history in a scratch folder.
tmux_ new-session -d -s repl -x 80 -y 50 \
  "env HOME=$WORK CLOUDLUA_CONFIG_FILE=/dev/null CLOUDLUA_HISTORY=$WORK/history TERM=xterm $BIN"
tmux_ set-option -t repl remain-on-exit on >/dev/null  # a crash leaves its last screen to show

# Runs "$@" until it succeeds, at most 600 times (some 30 s on an idle machine: only a
# bound for a REPL that never answers, no time checked); false if it never does.
poll() {
  for _ in $(seq 600); do
    "$@" && return 0
    sleep 0.05
  done
  return 1
}
screen() { tmux_ capture-pane -p -t repl; }
shows() { screen | grep -qF -- "$1"; }                      # the screen holds the text $1
prompts() { [ "$(screen | grep -c 'cloudlua\[')" = "$1" ]; }  # $1 prompt lines on the screen
# The last prompt line (the one being typed), without the spaces after it.
typed_line() { screen | grep -F 'cloudlua[' | tail -n 1 | sed 's/ *$//'; }
only_prompt() { [ "$(screen | grep -c .)" = 1 ] && [[ $(typed_line) == *'>' ]]; }

# The screen is the empty prompt alone; else Ctrl-L is sent again. On a busy machine the
# Ctrl-L may be read before the Ctrl-C's new prompt is drawn, which then lands below it.
cleared() {
  only_prompt && return 0
  tmux_ send-keys -t repl C-l
  return 1
}

# Cancels the line being typed (Ctrl-C) and clears the screen, the REPL back at its prompt.
next_line() {
  tmux_ send-keys -t repl C-c
  tmux_ clear-history -t repl
  tmux_ send-keys -t repl C-l
  poll cleared || fail "no empty prompt after Ctrl-C"
}

# Types $1 and Tab: the line must then read $2 (what `what` names completed), no more.
completes() {
  local typed=$1 line=$2 what=$3
  tmux_ send-keys -t repl -l "$typed"
  tmux_ send-keys -t repl Tab
  poll shows "$line" || fail "'$typed' + Tab never showed '$line' ($what)"
  [[ $(typed_line) == *"> $line" ]] || fail "'$typed' + Tab made '$(typed_line)', not $what"
}

poll shows 'cloudlua[' || fail "no prompt"
next_line

# A field nested in an operation's argument: the model's, not a global's.
completes 'cloud.cluster.update_snapshot{ snapshot = { ta' 'cloud.cluster.update_snapshot{ snapshot = { tags' \
  "the model's 'tags'"
! screen | grep -qw table || fail "the global 'table' was offered"
next_line

# A library function's options table: cloud.wait_for's third argument.
completes "cloud.wait_for('ClusterRunning', {}, { max_" "cloud.wait_for('ClusterRunning', {}, { max_attempts" \
  "cloud.wait_for's option 'max_attempts'"
next_line

# A long list: cloud's fields, in columns, each row narrower than the pane and
# made of whole candidates, then the prompt again with the line as typed.
tmux_ send-keys -t repl -l 'cloud.'
tmux_ send-keys -t repl Tab
poll prompts 2 || fail "no prompt after the list"
shows cloud.wait_for || fail "cloud.wait_for is not listed"
rows=$(screen | sed -n '2,$p' | grep -v 'cloudlua\[' | grep .) || fail "no candidates listed"
[ "$(wc -l <<<"$rows")" -gt 1 ] || fail "the candidates are on one row"
while IFS= read -r row; do
  [ ${#row} -lt 80 ] || fail "a row as wide as the pane (it wraps): '$row'"
  for word in $row; do
    [[ $word =~ ^cloud\.[A-Za-z_][A-Za-z_0-9]*$ ]] || fail "'$word' of row '$row' is not a whole candidate"
  done
done <<<"$rows"
grep -Eq "cloud\.[a-z_]+ +cloud\." <<<"$rows" || fail "no row holds two candidates: not in columns"
[[ $(typed_line) == *"> cloud." ]] || fail "the line after the list is '$(typed_line)'"
tmux_ send-keys -t repl C-c C-d
echo "ok: nested fields, a library function's options and a list in columns through tmux"
