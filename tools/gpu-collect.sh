#!/usr/bin/env bash
# Bring a GPU run's rows (tools/gpu-run.sh's leaderboards.tar.gz) into leaderboards/, beside
# the rows already there (one file per cell: nothing is overwritten but a cell's own file),
# then regenerate the reproduction report. Commit what it adds.
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
fi
ls "$DEST"
if [ -z "${GPU_COLLECT_NO_REPORT:-}" ]; then
    "${PYTHON:-.venv/bin/python}" -m harness.cli report --paper --leaderboards "$DEST"
fi
