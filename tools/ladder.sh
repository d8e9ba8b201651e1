#!/usr/bin/env bash
# The instrument ladder (suites/cpu-ladder.yaml) on a CPU, one cell group at a time, in the
# order that answers first what matters first: one rung at a time (the tiny encoders, the
# decoders, then the mini encoders), and within a rung its twin, ce and cwt at seed 0, then
# at seed 1.
#
#   setsid nohup tools/ladder.sh > runs/ladder.log 2>&1 &     # resumable: rerun after a stop
#
# Each `hlm run SUITE --model M --seed S` skips what is done, resumes a pretraining from its
# newest checkpoint and writes rows as cells finish; commit leaderboards/cpu-ladder as they
# land. LADDER_MODELS (labels) and LADDER_SEEDS narrow it; LADDER_THREADS (default 1) sets the
# torch threads, so the other core stays free for other work.
set -u
cd "$(dirname "$0")/.."
HLM=${HLM:-.venv/bin/hlm}
export HLM_DATA_ROOT=${HLM_DATA_ROOT:-$(cd .. && pwd)/shared/data}
export OMP_NUM_THREADS=${LADDER_THREADS:-1}
SEEDS=${LADDER_SEEDS:-"0 1"}
RUNGS=("modernbert-tiny-untrained modernbert-tiny-ce modernbert-tiny-cwt"
  "pythia-tiny-untrained pythia-tiny-ce pythia-tiny-cwt"
  "modernbert-mini-untrained modernbert-mini-ce modernbert-mini-cwt")
[ -n "${LADDER_MODELS:-}" ] && RUNGS=("$LADDER_MODELS")
for rung in "${RUNGS[@]}"; do
  for seed in $SEEDS; do
    for model in $rung; do
      echo "== $(date -u +%FT%TZ) $model seed $seed"
      "$HLM" run suites/cpu-ladder.yaml --model "$model" --seed "$seed" --no-progress \
        || echo "== $(date -u +%FT%TZ) $model seed $seed exited $?"
    done
  done
done
echo "== $(date -u +%FT%TZ) done"
