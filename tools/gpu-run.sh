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
# pydantic or lm-eval) and unpacks the carried data once as $HLM_DATA_ROOT. Each suite is a
# lane: the lanes run side by side (small models leave most of an H100 idle between kernels,
# and the evaluations are mostly CPU work), each running its suite seed by seed and, within a
# seed, model by model in the suite's order (`hlm run SUITE --seed N --model M`), so a suite
# lists first what matters first (an untrained twin before the models its gate compares).
# GPU_RUN_MODELS, a list of model labels, runs only those, in its order (within each seed), so
# a lease can put first an arm that has no rows yet. GPU_RUN_SEED_LANES=N splits each suite
# into N lanes by seed (lane k: the k-th, (k+N)-th... of its seeds), run side by side: one
# pretraining leaves much of an H100 idle (bert-small-ce stepped 764k tokens/s alone and still
# 561k beside the decoder's lane, 2026-11-27), and two `hlm run` of one suite share its
# leaderboard safely (harness.run.claims; the tokenizer and token cache are built once, under a
# lock). The lanes leave out the quiet tasks
# (GPU_RUN_QUIET_TASKS, task labels, default "throughput": a speed measured beside another
# lane measures the sharing) and stop GPU_RUN_QUIET_S (default 90; none where no suite has a
# quiet task) + GPU_RUN_BENCH_S seconds
# (default 150) before the budget ends; then, alone on the GPU, each suite's quiet tasks run
# at the seeds its lane started (`hlm run SUITE --seed N --task T`: every model's cells of
# that task, which need no checkpoint), and after them the benchmark
# (bench.json: the headless bert-base bf16 step's MFU beside the vanilla one, and the rest of
# `hlm bench --device cuda`; its rows are also logged one by one, so a benchmark cut off by
# the budget leaves those it measured in log.txt), once: a later call finds it done.
# Into $OUT (default ./gpu-results): leaderboards.tar.gz (every row so far of the suites run),
# log.txt (each line with the seconds into the call: the set-up's share of a lease shows
# there), log-SUITE.txt for each lane, machine.txt, status.txt ("done"; "more": call again;
# "failed": a cell failed, its lane's log says why) and bench.json.
#
# Environment: GPU_RUN_SUITES (default: suites/paper-gpu-encoder.yaml suites/paper-gpu-decoder.yaml),
# GPU_RUN_MODELS, GPU_RUN_SEED_LANES (default 1), GPU_RUN_QUIET_TASKS ("" runs them in the
# lanes), GPU_RUN_QUIET_S,
# GPU_RUN_QUIET_FORCE=1 (measure the quiet tasks' cells again, at the seeds the lanes started),
# GPU_RUN_BUDGET_S, GPU_RUN_MIN_CELL_S (default 60: a lane with less time left
# starts no model; on a lease's last call, set it to a model's whole time, so that no run is
# started that the lease would cut off and lose with the machine), GPU_RUN_BENCH_S,
# GPU_RUN_BENCH=0 to skip the benchmark,
# GPU_RUN_BENCH_ARGS (more `hlm bench` flags: --quick, or --only mfu for the MFU goal's steps
# alone), GPU_RUN_WORK (default .gpu-work),
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
ONLY=" ${GPU_RUN_MODELS:-} "
BUDGET=${GPU_RUN_BUDGET_S:-480}
MIN_CELL=${GPU_RUN_MIN_CELL_S:-60}  # a lane starts a model only with more seconds than this left
SEED_LANES=${GPU_RUN_SEED_LANES:-1}
if ! [[ "$SEED_LANES" =~ ^[1-9][0-9]*$ ]]; then
    echo "gpu-run: GPU_RUN_SEED_LANES must be a whole number of lanes, 1 or more (got '$SEED_LANES')" >&2
    exit 2
fi
WORK=${GPU_RUN_WORK:-.gpu-work}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
LOG="$OUT/log.txt"
say() { echo "gpu-run [+$(($(date +%s) - start)) s]: $*" | tee -a "$LOG"; }  # seconds into the call
if [ -z "${GPU_RUN_NO_INSTALL:-}" ]; then
    if [ ! -f "$WORK/site/.installed" ]; then
        say "installing the carried wheels"
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$WORK/site" .gpu-carry/wheels/*.whl
        touch "$WORK/site/.installed"
    fi
    export PYTHONPATH="$WORK/site:${PYTHONPATH:-}"
    if [ ! -f "$WORK/data/.unpacked" ]; then
        say "unpacking the carried data"
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
BENCH=${GPU_RUN_BENCH:-1}
[ -s "$WORK/bench.json" ] && BENCH=0  # measured in an earlier call
reserve=0
[ "$BENCH" != 0 ] && reserve=${GPU_RUN_BENCH_S:-150}
QUIET=" ${GPU_RUN_QUIET_TASKS-throughput} "  # task labels measured alone, after the lanes
rm -rf "$WORK/lanes" "$WORK/quiet" "$WORK/suites" && mkdir -p "$WORK/lanes" "$WORK/quiet" "$WORK/suites"
# each suite's name, seeds, model labels and task labels (a line each) into $WORK/suites/FILE.txt,
# or why it does not load into FILE.txt.err (its lane fails, not the others'); one process
# shellcheck disable=SC2086  # SUITES is a list of paths
"$PY" - "$WORK/suites" $SUITES <<'DESCRIBE' || say "the suites could not be read (above)"
import sys
import traceback
from pathlib import Path

from harness.suite import load_suite

folder = Path(sys.argv[1])
for path in sys.argv[2:]:
    meta = folder / f"{Path(path).name}.txt"
    try:
        s = load_suite(path)
    except Exception:  # any reason at all: the lane says it, the other lanes run
        Path(f"{meta}.err").write_text(traceback.format_exc())
        continue
    lines = [s.name, " ".join(map(str, s.seeds)), " ".join(m.label() for m in s.models)]
    meta.write_text("\n".join([*lines, " ".join(t.label() for t in s.tasks)]) + "\n")
DESCRIBE
say "the suites read: the lanes start"
quiet_reserve=0  # kept only where a suite has a quiet task
for meta in "$WORK"/suites/*.txt; do
    [ -e "$meta" ] || continue
    for label in $(sed -n 4p "$meta"); do
        if [[ "$QUIET" == *" $label "* ]]; then quiet_reserve=${GPU_RUN_QUIET_S:-90}; fi
    done
done
if [ "$quiet_reserve" -gt 0 ]; then
    say "quiet tasks (${QUIET:1:-1}) run alone after the lanes, in the last $quiet_reserve s before the benchmark's"
else
    say "no suite has a quiet task (${QUIET:1:-1}): the lanes run to the benchmark's slot"
fi
quiet_force=()  # GPU_RUN_QUIET_FORCE=1: measure them again (rows measured on a shared GPU)
[ -n "${GPU_RUN_QUIET_FORCE:-}" ] && quiet_force=(--force)
left() { echo $((BUDGET - $(date +%s) + start)); }   # of the call
quiet_left() { echo $(($(left) - reserve)); }         # of the quiet tasks
lane_left() { echo $(($(quiet_left) - quiet_reserve)); }  # of the lanes

start_from_collected() {  # SUITE: on a fresh machine, its rows collected before (before the lanes:
    # two lanes of one suite must not both copy them)
    local meta name
    meta="$WORK/suites/$(basename "$1").txt"
    [ -f "$meta" ] || return 0
    name=$(head -n 1 "$meta")
    if [ ! -d "$LB/$name" ] && [ -d "$FROM/$name" ]; then
        mkdir -p "$LB" && cp -r "$FROM/$name" "$LB/$name"
    fi
}

lane() {  # SUITE K: seeds K, K + SEED_LANES... of the suite, model by model; the outcome (done,
    # more, failed) into $WORK/lanes/NAME (NAME@K with several lanes a suite)
    local suite=$1 k=$2 meta name seeds models labels seed model status label skips=() i=0 mine=""
    local tag="" ltag=""
    [ "$SEED_LANES" -gt 1 ] && tag="@$k" && ltag="-$k"
    meta="$WORK/suites/$(basename "$suite").txt"
    if [ ! -f "$meta" ]; then
        cat "$meta.err" >&2 2>/dev/null || true
        say "$suite does not load (above): its lane stopped"
        echo failed > "$WORK/lanes/$(basename "$suite")$tag"
        return 2
    fi
    { read -r name; read -r seeds; read -r models; read -r labels; } < "$meta"
    for seed in $seeds; do  # this lane's share of the seeds
        [ $((i % SEED_LANES)) -eq "$k" ] && mine+="$seed "
        i=$((i + 1))
    done
    seeds=$mine
    for label in $labels; do  # the quiet tasks this suite has: left to the quiet phase
        if [[ "$QUIET" == *" $label "* ]]; then
            skips+=(--skip-task "$label")
            echo "$suite" > "$WORK/quiet/$name.suite" && echo "$label" >> "$WORK/quiet/$name.labels"
        fi
    done
    local llog="$OUT/log-$name$ltag.txt" outcome=done
    if [ "$ONLY" != "  " ]; then  # the models named, in the order named
        local m chosen=""
        for m in $ONLY; do [[ " $models " == *" $m "* ]] && chosen+="$m "; done
        models=$chosen
    fi
    for seed in $seeds; do
        for model in $models; do
            if [ "$(lane_left)" -le "$MIN_CELL" ]; then
                say "$name: budget spent before seed $seed $model ($(lane_left) s left, a model needs $MIN_CELL): call again to go on"
                outcome=more
                break 2
            fi
            say "$name seed $seed $model ($(lane_left) s left)"
            echo "$seed" >> "$WORK/quiet/$name.seeds"
            status=0
            timeout --signal=TERM --kill-after=60 "$(lane_left)" "$PY" -m harness.cli run "$suite" \
                --seed "$seed" --model "$model" "${skips[@]}" --leaderboards "$LB" --no-progress >> "$llog" 2>&1 || status=$?
            if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then  # the budget's timeout
                say "$name seed $seed $model cut off by the budget (its finished cells are kept; call again to go on)"
                outcome=more
                break 2
            elif [ "$status" -ne 0 ]; then  # its log says why; a later call retries only its failed cells
                say "$name seed $seed $model failed with status $status (see log-$name$ltag.txt)"
                outcome=failed
            fi
        done
    done
    echo "$outcome" > "$WORK/lanes/$name$tag"
}

quiet_tasks() {  # after the lanes, on a quiet GPU: each suite's quiet tasks at the seeds its lane
    # started; "more" or "failed" into $WORK/quiet/outcomes
    local f name suite seed label status
    for f in "$WORK"/quiet/*.suite; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .suite)
        suite=$(cat "$f")
        [ -s "$WORK/quiet/$name.seeds" ] || continue
        for seed in $(sort -un "$WORK/quiet/$name.seeds"); do
            for label in $(sort -u "$WORK/quiet/$name.labels"); do
                if [ "$(quiet_left)" -le 20 ]; then
                    say "$name: no time left for $label at seed $seed: call again to measure it"
                    echo more >> "$WORK/quiet/outcomes"
                    return
                fi
                say "$name: $label of seed $seed, alone on the GPU ($(quiet_left) s left)"
                status=0
                timeout --signal=TERM --kill-after=30 "$(quiet_left)" "$PY" -m harness.cli run "$suite" \
                    --seed "$seed" --task "$label" "${quiet_force[@]}" --leaderboards "$LB" --no-progress >> "$OUT/log-$name.txt" 2>&1 || status=$?
                if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
                    say "$name: $label of seed $seed cut off by the budget: call again to measure it"
                    echo more >> "$WORK/quiet/outcomes"
                    return
                elif [ "$status" -ne 0 ]; then
                    say "$name: $label of seed $seed failed with status $status (see log-$name.txt)"
                    echo failed >> "$WORK/quiet/outcomes"
                fi
            done
        done
    done
}

for suite in $SUITES; do start_from_collected "$suite"; done
for suite in $SUITES; do
    for ((k = 0; k < SEED_LANES; k++)); do lane "$suite" "$k" & done
done
wait
outcomes=$(cat "$WORK"/lanes/* 2>/dev/null || echo failed)
quiet_tasks
outcomes="$outcomes $(cat "$WORK/quiet/outcomes" 2>/dev/null || true)"
if [ "$BENCH" != 0 ]; then
    say "the benchmark, on a quiet GPU ($(left) s left)"
    # shellcheck disable=SC2086  # GPU_RUN_BENCH_ARGS is a list of flags
    if timeout --signal=TERM --kill-after=10 "$(($(left) > 10 ? $(left) : 10))" "$PY" -m harness.cli bench \
            --device cuda --json ${GPU_RUN_BENCH_ARGS:-} > "$WORK/bench.json.tmp" 2>> "$LOG"; then
        mv "$WORK/bench.json.tmp" "$WORK/bench.json"
    else
        say "the benchmark ended with status $? (the rows it measured are in this log): call again to measure it whole"
        rm -f "$WORK/bench.json.tmp"
        outcomes="$outcomes more"
    fi
fi
if [ -s "$WORK/bench.json" ]; then cp "$WORK/bench.json" "$OUT/bench.json"; fi
parts=()  # the leaderboards of this call's suites (a suite that did not load has none)
for lane_file in "$WORK"/lanes/*; do
    n=$(basename "$lane_file")
    n=${n%@*}  # a suite's lanes share its leaderboard
    if [ -d "$LB/$n" ] && [[ " ${parts[*]} " != *" leaderboards/$n "* ]]; then parts+=("leaderboards/$n"); fi
done
tar -C "$WORK" -czf "$OUT/leaderboards.tar.gz" "${parts[@]}" 2>/dev/null || tar -czf "$OUT/leaderboards.tar.gz" -T /dev/null
if [[ "$outcomes" == *more* ]]; then echo more; elif [[ "$outcomes" == *failed* ]]; then echo failed; else echo done; fi > "$OUT/status.txt"
say "$(cat "$OUT/status.txt") in $(( $(date +%s) - start )) s; results in $OUT"
