#!/usr/bin/env bash
# The instrument ladder (suites/cpu-ladder.yaml) on a CPU, one cell group at a time, in the
# order that answers first what matters first: one rung at a time (the tiny encoders, the
# decoders, then the mini encoders), and within a rung its twin, ce and cwt at seed 0, then
# at seed 1.
#
#   setsid nohup tools/ladder.sh > runs/ladder.log 2>&1 &     # resumable: rerun after a stop
#
# The code runs from a worktree pinned at the commit the script starts from
# (runs/ladder-code, LADDER_COMMIT to choose another), so editing the checkout while the
# ladder runs (hours) never hands a half-edited file to a new cell. Rows land in this
# checkout's leaderboards/, checkpoints in its runs/. Each `hlm run SUITE --model M --seed S`
# skips what is done, resumes a pretraining from its newest checkpoint and writes rows as
# cells finish; commit leaderboards/cpu-ladder as they land. LADDER_MODELS (labels) and
# LADDER_SEEDS narrow it; LADDER_THREADS (default 1) sets the torch threads, so the other
# core stays free for other work, or runs a second lane on other cells (cells are claimed,
# so two lanes never compute one cell):
#
#   LADDER_MODELS="modernbert-tiny-cwt pythia-tiny-untrained pythia-tiny-ce pythia-tiny-cwt" \
#     LADDER_SEEDS="1 0" setsid nohup tools/ladder.sh > runs/ladder-lane2.log 2>&1 &
#
# A cell evaluates its checkpoints once its pretraining ends; to read them sooner, while it
# trains, `hlm run suites/cpu-ladder.yaml --model M --seed S --reached` evaluates those
# written so far (the lane then skips them).
#
# A lane started while another runs keeps the worktree's commit (never re-pinned under it).
# A lane leaves a model whose pretraining the other lane is training to that lane
# (`--skip-busy`), which evaluates it after: it moves on instead of idling on the lock.
#
# LADDER_UNTIL_STEP=N is a budget for this sitting: each cell's pretraining stops once its
# step-N checkpoint is written (the run keeps its schedule, and a later lane continues it), then
# the checkpoints reached are evaluated. LADDER_SKIP_TASKS leaves out task labels (e.g. "glue",
# the fine-tuning, which costs modernbert-tiny 12 minutes a checkpoint on one thread):
#
#   LADDER_MODELS="modernbert-mini-ce" LADDER_UNTIL_STEP=2460 LADDER_SKIP_TASKS=glue \
#     setsid nohup tools/ladder.sh > runs/ladder-mini.log 2>&1 &
#
# LADDER_SUITE runs another suite the same way, from its own worktree (runs/<name>-code),
# with LADDER_MODELS naming its models in order; e.g. the verdict, a lane per set of seeds:
#
#   LADDER_SUITE=suites/cpu-operating-point.yaml LADDER_SEEDS="2 4 6" \
#     LADDER_MODELS="pythia-tiny-untrained pythia-tiny-ce pythia-tiny-cwt" \
#     setsid nohup tools/ladder.sh > runs/verdict-a.log 2>&1 &
set -u
cd "$(dirname "$0")/.."
HERE=$(pwd)
HLM=${HLM:-$HERE/.venv/bin/hlm}
export HLM_DATA_ROOT=${HLM_DATA_ROOT:-$(cd .. && pwd)/shared/data}
export HLM_RUNS_DIR=${HLM_RUNS_DIR:-$HERE/runs}
export OMP_NUM_THREADS=${LADDER_THREADS:-1}
SUITE=${LADDER_SUITE:-suites/cpu-ladder.yaml}
NAME=$(basename "$SUITE" .yaml)
CODE=$HERE/runs/${NAME#cpu-}-code  # runs/ladder-code for suites/cpu-ladder.yaml
if [ "$SUITE" != suites/cpu-ladder.yaml ] && [ -z "${LADDER_MODELS:-}" ]; then
  echo "LADDER_SUITE=$SUITE: name its models in LADDER_MODELS" >&2
  exit 2
fi
COMMIT=${LADDER_COMMIT:-$(git rev-parse HEAD)}
if [ -d "$CODE" ] && pgrep -f "hlm run $SUITE" > /dev/null; then
  PINNED=$(git -C "$CODE" rev-parse HEAD)
  if [ -z "${LADDER_COMMIT:-}" ]; then
    COMMIT=$PINNED  # a lane is running from the worktree: join it at its commit
  elif [ "$(git rev-parse "$COMMIT")" != "$PINNED" ]; then
    echo "a ladder lane runs from $PINNED: stop it first, or run at LADDER_COMMIT=$PINNED" >&2
    exit 2
  fi
fi
if [ -d "$CODE" ]; then
  git -C "$CODE" checkout -q --detach "$COMMIT"
else
  git worktree add -q --detach "$CODE" "$COMMIT"
fi
echo "== $(date -u +%FT%TZ) code at $(git -C "$CODE" rev-parse --short HEAD)"
export PYTHONPATH=$CODE
SEEDS=${LADDER_SEEDS:-"0 1"}
RUNGS=("modernbert-tiny-untrained modernbert-tiny-ce modernbert-tiny-cwt"
  "pythia-tiny-untrained pythia-tiny-ce pythia-tiny-cwt"
  "modernbert-mini-untrained modernbert-mini-ce modernbert-mini-cwt")
[ -n "${LADDER_MODELS:-}" ] && RUNGS=("$LADDER_MODELS")
SKIP=()
for task in ${LADDER_SKIP_TASKS:-}; do SKIP+=(--skip-task "$task"); done

run_cell() {  # MODEL SEED: its cells, or with LADDER_UNTIL_STEP its pretraining to that step
  local cell=(--model "$1" --seed "$2" --leaderboards "$HERE/leaderboards" "${SKIP[@]}")
  if [ -z "${LADDER_UNTIL_STEP:-}" ]; then
    "$HLM" run "$SUITE" "${cell[@]}" --no-progress --skip-busy
    return
  fi
  local run stop pid  # the pretraining's key: the plan's "pretraining" column (7th field)
  run=$("$HLM" run "$SUITE" "${cell[@]}" --dry-run | awk -F'|' '{print $7}' \
    | grep -o -m1 '[0-9a-f]\{16\}')
  stop=$HLM_RUNS_DIR/pretrain/$run/checkpoints/step-$(printf %07d "$LADDER_UNTIL_STEP")
  "$HLM" run "$SUITE" "${cell[@]}" --no-progress --skip-busy &
  pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    if [ -n "$run" ] && [ -d "$stop" ]; then  # one SIGTERM: hlm checkpoints and exits
      echo "== $(date -u +%FT%TZ) $stop written: stopping there"
      kill -TERM "$pid"
      break
    fi
    sleep 20
  done
  wait "$pid"
  "$HLM" run "$SUITE" "${cell[@]}" --no-progress --reached
}

cd "$CODE"
for rung in "${RUNGS[@]}"; do
  for seed in $SEEDS; do
    for model in $rung; do
      echo "== $(date -u +%FT%TZ) $model seed $seed"
      run_cell "$model" "$seed"
      rc=$?
      [ "$rc" -ne 0 ] && echo "== $(date -u +%FT%TZ) $model seed $seed exited $rc"
    done
  done
done
echo "== $(date -u +%FT%TZ) done"
