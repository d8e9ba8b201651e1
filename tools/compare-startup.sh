#!/usr/bin/env bash
# How long `hlm` commands take from a fresh interpreter, at a git revision and in this working
# tree, side by side: rounds alternate between the two, so both see the same machine state.
#
#   tools/compare-startup.sh REV [ROUNDS] -- "validate suites/quickstart.yaml" "ls" ...
#
# REV is checked out in a temporary git worktree and run with this tree's Python environment:
# PYTHONPATH names the packages' tree, and `python -P` keeps the working folder off the path.
# Both run from this tree's root, so relative suite and leaderboard paths name the same
# files for both. It prints the folder each side's `harness` came from, then one line per
# command: its seconds at REV and here, round by round ("failed" where it exited non-zero).
# Default: 3 rounds. The figures of docs/PERFORMANCE.md's "Command-line start-up" came from
# it.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: tools/compare-startup.sh REV [ROUNDS] -- COMMAND..." >&2; exit 2; }
[ $# -ge 3 ] || usage
rev=$1; shift
rounds=3
if [ "$1" != "--" ]; then rounds=$1; shift; fi
[ "${1:-}" = "--" ] || usage
shift
case "$rounds" in '' | *[!0-9]* | 0) echo "compare-startup: ROUNDS must be a positive whole number, not '$rounds'" >&2; exit 2 ;; esac
git rev-parse --verify -q "$rev^{commit}" >/dev/null || {
    echo "compare-startup: $rev: not a revision of this repository" >&2
    exit 2
}
PY=${PYTHON:-.venv/bin/python}
here=$PWD
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git worktree add -q --detach "$tree" "$rev"
seconds() {  # seconds of `hlm $2` with the packages of tree $1 ("failed": it exited non-zero)
    local start end
    start=$(date +%s.%N)
    # shellcheck disable=SC2086  # the command's words are its arguments
    if ! PYTHONPATH="$1" "$PY" -P -m harness.cli $2 >/dev/null 2>&1; then
        printf failed
        return
    fi
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}
package() { PYTHONPATH="$1" "$PY" -P -c 'import harness; print(harness.__path__[0])'; }
echo "$rev: harness from $(package "$tree")"
echo "here: harness from $(package "$here")"
for command in "$@"; do
    before=() after=()
    for _ in $(seq "$rounds"); do
        before+=("$(seconds "$tree" "$command")")
        after+=("$(seconds "$here" "$command")")
    done
    echo "hlm $command | $rev: ${before[*]} | here: ${after[*]}"
done
