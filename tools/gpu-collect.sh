#!/usr/bin/env bash
# Bring a GPU run's rows (tools/gpu-run.sh's leaderboards.tar.gz) into leaderboards/, beside
# the rows already there (one file per cell: nothing is overwritten but a cell's own file),
# then regenerate the reproduction report (where they go into leaderboards/, the folder it
# reads: GPU_COLLECT_INTO names another). Commit what it adds. Where the run filed cells away
# as superseded (an edited suite, or a change to what cell ids hash), the copy of each such
# file here moves into the suite's _superseded/ too, as `hlm run` moves it: no row is kept
# twice, and none is lost.
#   tools/gpu-collect.sh /work/.device/.../gpu-results
set -euo pipefail
cd "$(dirname "$0")/.."
RESULTS=${1:?usage: tools/gpu-collect.sh RESULTS_FOLDER}
DEST=${GPU_COLLECT_INTO:-leaderboards}
[ -f "$RESULTS/leaderboards.tar.gz" ] || { echo "gpu-collect: no $RESULTS/leaderboards.tar.gz" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# not the claims of the cells a call was computing, nor the half-written files of a cell the
# budget cut off: only finished rows, samples and artifacts
tar -C "$tmp" -xzf "$RESULTS/leaderboards.tar.gz" --exclude='_claims' --exclude='.tmp-*' --exclude='.lock'
mkdir -p "$DEST"
if [ -d "$tmp/leaderboards" ]; then
    cp -r "$tmp/leaderboards/." "$DEST/"
    "${PYTHON:-.venv/bin/python}" - "$DEST" "$tmp/leaderboards" <<'FILE'
import sys
from pathlib import Path

from harness.results.leaderboard import current_cells, file_superseded

dest, came = Path(sys.argv[1]), Path(sys.argv[2])
for suite in sorted(p.name for p in came.iterdir() if p.is_dir()):
    cells = current_cells(dest / suite)
    for f in file_superseded(dest / suite, cells) if cells is not None else []:
        print(f"gpu-collect: {suite}: {f.name} is superseded (moved to {f.parent})")
FILE
fi
ls "$DEST"
# the project's page (docs/REPRODUCTION.md, the README's headline) is made from leaderboards/
# only: rows collected elsewhere would rewrite it without the rows committed here
if [ -z "${GPU_COLLECT_NO_REPORT:-}" ] && [ "$DEST" = leaderboards ]; then
    "${PYTHON:-.venv/bin/python}" -m harness.cli report --paper --leaderboards "$DEST"
elif [ -z "${GPU_COLLECT_NO_REPORT:-}" ]; then
    echo "gpu-collect: the reproduction page reads leaderboards/, not $DEST: for a page of these" \
        "rows, hlm report --paper --leaderboards $DEST --output-dir DIR"
fi
