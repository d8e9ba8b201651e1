#!/usr/bin/env bash
# The paper-gpu suites on one GPU machine, in bounded time, results into one folder.
#
#   here:        tools/gpu-pack.sh                     # .gpu-carry/: data + wheels (< 64 MiB with the repo)
#   GPU machine: tools/gpu-run.sh                      # device tool: carry [".gpu-carry"]
#   here:        tools/gpu-collect.sh RESULTS_FOLDER   # rows into leaderboards/, then commit them
#
# It installs the carried wheels (the machine has torch and transformers, not pydantic or
# lm-eval), unpacks the carried data as $HLM_DATA_ROOT, then runs each suite seed by seed
# (`hlm run SUITE --seed N`) until GPU_RUN_BUDGET_S seconds are spent: every finished cell's
# rows are written as it lands, a cell cut off by the budget loses only itself, and a later
# run picks up where the rows stop. Into $OUT (default ./gpu-results; the device tool brings
# back at most 8 files): leaderboards.tar.gz, log.txt, machine.txt and the GPU benchmark
# (bench.json: the headless bert-base bf16 step's MFU beside the vanilla one, and the rest
# of `hlm bench --device cuda`).
#
# Environment: GPU_RUN_SUITES (default: suites/paper-gpu-encoder.yaml suites/paper-gpu-decoder.yaml),
# GPU_RUN_BUDGET_S (default 2100: a 45-minute lease less start-up, transfers and the
# benchmark), GPU_RUN_BENCH=0 to skip the benchmark, GPU_RUN_NO_INSTALL=1 where the packages
# and $HLM_DATA_ROOT are there already (a toy run on a CPU: tests/test_gpu_run.py).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}
SUITES=${GPU_RUN_SUITES:-"suites/paper-gpu-encoder.yaml suites/paper-gpu-decoder.yaml"}
BUDGET=${GPU_RUN_BUDGET_S:-2100}
WORK=${GPU_RUN_WORK:-/tmp/hlm-gpu}
LOG="$OUT/log.txt"
mkdir -p "$WORK"
if [ -z "${GPU_RUN_NO_INSTALL:-}" ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$WORK/site" .gpu-carry/wheels/*.whl
    export PYTHONPATH="$WORK/site:${PYTHONPATH:-}"
    mkdir -p "$WORK/data" && xz -dc .gpu-carry/data.tar.xz | tar -C "$WORK/data" -xf -
    export HLM_DATA_ROOT="$WORK/data"
fi
export PYTHONPATH="$PWD:${PYTHONPATH:-}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export HLM_RUNS_DIR=${HLM_RUNS_DIR:-$WORK/runs}
LB="$WORK/leaderboards"
{ date -u; nvidia-smi 2>/dev/null || echo "no nvidia-smi"; "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"; } > "$OUT/machine.txt"
start=$(date +%s)
for suite in $SUITES; do
    seeds=$("$PY" -c "import sys; from harness.suite import load_suite; print(*load_suite(sys.argv[1]).seeds)" "$suite")
    for seed in $seeds; do
        left=$((BUDGET - $(date +%s) + start))
        if [ "$left" -le 60 ]; then
            echo "gpu-run: budget spent before $suite seed $seed" | tee -a "$LOG"
            break 2
        fi
        echo "gpu-run: $suite seed $seed ($left s left)" | tee -a "$LOG"
        timeout --signal=TERM "$left" "$PY" -m harness.cli run "$suite" --seed "$seed" \
            --leaderboards "$LB" --no-progress >> "$LOG" 2>&1 \
            || echo "gpu-run: $suite seed $seed ended with status $? (its finished cells are kept)" | tee -a "$LOG"
    done
done
if [ "${GPU_RUN_BENCH:-1}" != 0 ]; then
    timeout 600 "$PY" -m harness.cli bench --device cuda --json > "$OUT/bench.json" 2>> "$LOG" \
        || echo "gpu-run: the benchmark ended with status $?" | tee -a "$LOG"
fi
tar -C "$WORK" -czf "$OUT/leaderboards.tar.gz" leaderboards 2>/dev/null || tar -czf "$OUT/leaderboards.tar.gz" -T /dev/null
echo "gpu-run: done in $(( $(date +%s) - start )) s; results in $OUT" | tee -a "$LOG"
