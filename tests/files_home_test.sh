#!/usr/bin/env bash
# One home for file durability: no file of core, emulator, lua or repl calls mkstemp,
# rename( or fsync( but core/base/files.h and core/base/files.cpp (a temporary file, an exclusive
# create, a durable write, a link, a folder's flush, a commit by rename). A file that
# still does is listed in PENDING below until it moves onto core/base/files: the check then
# passes, and fails as soon as a file outside the list calls one of them, or a listed
# file no longer does (so that the list only shrinks).
# Usage: files_home_test.sh REPOSITORY_ROOT
set -u
root=${1:-.}
# Each to remove once the file uses core/base/files (none left).
PENDING=()
cd "$root" || exit 2
found=$(grep -rlE '\b(mk(o)?stemps?\(|rename(at2?)?\(|f(data)?sync\()' core emulator lua repl | grep -vE '^core/base/files\.(h|cpp)$' | sort)
status=0
for file in $found; do
  listed=0
  for p in "${PENDING[@]}"; do [ "$p" = "$file" ] && listed=1; done
  if [ $listed -eq 0 ]; then
    echo "files_home: $file makes a temporary, renames or flushes by itself; use core/base/files.h instead:"
    grep -nE '\b(mk(o)?stemps?\(|rename(at2?)?\(|f(data)?sync\()' "$file"
    status=1
  fi
done
for p in "${PENDING[@]}"; do
  grep -qxF "$p" <<<"$found" || { echo "files_home: $p no longer calls them: remove it from PENDING"; status=1; }
done
[ $status -eq 0 ] && echo "ok: only core/base/files (and ${#PENDING[@]} files pending) make temporaries, rename or flush (mkstemp, rename, fsync and their kin)"
exit $status
