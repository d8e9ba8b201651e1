#!/usr/bin/env bash
# The paper-gpu suites on one GPU machine, in calls of bounded time, results into one folder.
#
#   here:        tools/gpu-pack.sh                     # .gpu-carry/: data + wheels (< 64 MiB with the repo)
#   GPU machine: tools/gpu-run.sh                      # again and again: each call resumes
#   here:        tools/gpu-collect.sh RESULTS_FOLDER   # rows into leaderboards/, then commit them
#
# A GPU lent through the device tool runs one command for at most 10 minutes, and a machine
# left idle goes back: so each call runs for GPU_RUN_BUDGET_S seconds (default 480) and
# packs what it has, and the next call picks up where it stopped. What a call keeps for the
# next lives in .gpu-work/ (git-ignored, so a warm machine keeps it between calls): the
# installed wheels, the unpacked data, the runs' checkpoints (a cell cut off by the budget is
# stopped with SIGTERM, which checkpoints it) and the rows. On a fresh machine the rows start
# from the repository's committed leaderboards/paper-gpu-*, so `hlm run` skips every cell
# collected before and only a cell in flight starts again.
#
# Each call installs the carried wheels once (the machine has torch and transformers, not
# pydantic or lm-eval), unpacks the carried data once as $HLM_DATA_ROOT, then runs each suite
# seed by seed (`hlm run SUITE --seed N`) until the budget is spent. Once every seed is done,
# a call with at least GPU_RUN_BENCH_MIN_S seconds left (default 240) runs the GPU benchmark
# (bench.json: the headless bert-base bf16 step's MFU beside the vanilla one, and the rest of
# `hlm bench --device cuda`). Into $OUT (default ./gpu-results): leaderboards.tar.gz (every
# row so far), log.txt, machine.txt, status.txt ("done"; "more": call again; "failed": a seed
# failed, its log says why) and bench.json.
#
# Environment: GPU_RUN_SUITES (default: suites/paper-gpu-encoder.yaml suites/paper-gpu-decoder.yaml),
# GPU_RUN_BUDGET_S, GPU_RUN_BENCH=0 to skip the benchmark, GPU_RUN_WORK (default .gpu-work),
# GPU_RUN_FROM (the leaderboards a fresh work folder starts from; default leaderboards),
# GPU_RUN_NO_INSTALL=1 where the packages and $HLM_DATA_ROOT are there already (a toy run on
# a CPU: tests/test_gpu_run.py).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}
SUITES=${GPU_RUN_SUITES:-"suites/paper-gpu-encoder.yaml suites/paper-gpu-decoder.yaml"}
BUDGET=${GPU_RUN_BUDGET_S:-480}
WORK=${GPU_RUN_WORK:-.gpu-work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
LOG="$OUT/log.txt"
say() { echo "gpu-run: $*" | tee -a "$LOG"; }
if [ -z "${GPU_RUN_NO_INSTALL:-}" ]; then
    if [ ! -f "$WORK/site/.installed" ]; then
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$WORK/site" .gpu-carry/wheels/*.whl
        touch "$WORK/site/.installed"
    fi
    export PYTHONPATH="$WORK/site:${PYTHONPATH:-}"
    if [ ! -f "$WORK/data/.unpacked" ]; then
        mkdir -p "$WORK/data" && xz -dc .gpu-carry/data.tar.xz | tar -C "$WORK/data" -xf -
        touch "$WORK/data/.unpacked"
    fi
    export HLM_DATA_ROOT="$WORK/data"
fi
export PYTHONPATH="$PWD:${PYTHONPATH:-}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export HLM_RUNS_DIR=${HLM_RUNS_DIR:-$WORK/runs}
LB="$WORK/leaderboards"
FROM=${GPU_RUN_FROM:-leaderboards}
{ date -u; nvidia-smi 2>/dev/null || echo "no nvidia-smi"; "$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"; } > "$OUT/machine.txt"
left() { echo $((BUDGET - $(date +%s) + start)); }
more=0 failed=0
for suite in $SUITES; do
    named=$("$PY" -c "import sys; from harness.suite import load_suite; s = load_suite(sys.argv[1]); print(s.name, *s.seeds)" "$suite") \
        || { say "$suite does not load (above): stopped"; exit 2; }
    read -r name seeds <<< "$named"
    if [ ! -d "$LB/$name" ] && [ -d "$FROM/$name" ]; then  # a fresh machine: the rows collected before
        mkdir -p "$LB" && cp -r "$FROM/$name" "$LB/$name"
    fi
    for seed in $seeds; do
        if [ "$(left)" -le 60 ]; then
            say "budget spent before $suite seed $seed: call again to go on"
            more=1
            break 2
        fi
        say "$suite seed $seed ($(left) s left)"
        status=0
        timeout --signal=TERM --kill-after=60 "$(left)" "$PY" -m harness.cli run "$suite" \
            --seed "$seed" --leaderboards "$LB" --no-progress >> "$LOG" 2>&1 || status=$?
        if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then  # the budget's timeout
            say "$suite seed $seed cut off by the budget (its finished cells are kept; call again to go on)"
            more=1
            break 2
        elif [ "$status" -ne 0 ]; then  # its log says why; a later call retries only its failed cells
            say "$suite seed $seed failed with status $status (see above)"
            failed=1
        fi
    done
done
if [ "$more" = 0 ] && [ "${GPU_RUN_BENCH:-1}" != 0 ]; then
    if [ -s "$WORK/bench.json" ]; then
        say "the benchmark ran in an earlier call (bench.json)"
    elif [ "$(left)" -ge "${GPU_RUN_BENCH_MIN_S:-240}" ]; then
        timeout "$(left)" "$PY" -m harness.cli bench --device cuda --json > "$WORK/bench.json" 2>> "$LOG" \
            || { say "the benchmark ended with status $?"; rm -f "$WORK/bench.json"; }
    else
        say "every seed is done; the benchmark waits for a call with ${GPU_RUN_BENCH_MIN_S:-240} s left"
        more=1
    fi
fi
if [ -s "$WORK/bench.json" ]; then cp "$WORK/bench.json" "$OUT/bench.json"; fi
tar -C "$WORK" -czf "$OUT/leaderboards.tar.gz" leaderboards 2>/dev/null || tar -czf "$OUT/leaderboards.tar.gz" -T /dev/null
if [ "$more" = 1 ]; then echo more; elif [ "$failed" = 1 ]; then echo failed; else echo done; fi > "$OUT/status.txt"
say "$(cat "$OUT/status.txt") in $(( $(date +%s) - start )) s; results in $OUT"
