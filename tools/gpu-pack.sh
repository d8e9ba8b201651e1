#!/usr/bin/env bash
# Pack, on this machine, what the GPU machine needs and lacks into .gpu-carry/ (git-ignored;
# name it in the device tool's `carry`, 64 MiB at most with the repository):
#   .gpu-carry/data.tar.xz   the data the paper-gpu suites read, from $HLM_DATA_ROOT
#   .gpu-carry/wheels/       tools/gpu-wheels.txt for CPython 3.12 on x86-64 Linux, lm-eval's
#                            without its own task folders (tools/slim_wheel.py: 8.7 -> 0.3 MiB;
#                            the suites evaluate harness/lm_eval_tasks/)
# Then, on the GPU machine: tools/gpu-run.sh (see its header).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${HLM_DATA_ROOT:-../shared/data}
PY=${PYTHON:-.venv/bin/python}
CARRY=.gpu-carry
# what the GPU suites read and nothing else: every corpus and validation file their pretraining
# names (tools/gpu_corpus_files.py over GPU_PACK_SUITES, default the paper-gpu and gpu suites:
# the 100 files of enwiki/AA/, about 1 MB and 0.2M tokens each, xz keeps about 30 %, and
# enwiki/AB/wiki_52 held out for validation; all of them, never a part, since a glob names
# whatever matches where it is read), the five GLUE tasks with a local train set, the
# zero-shot tasks' local files and WordNet's four data files (Appendix A), cut to the fields
# the synonyms task reads (tools/trim_wordnet.py: the same pairs, 4.8 -> 1.2 MB compressed).
# The sum with the repository and the wheels is checked below.
PACK_SUITES=${GPU_PACK_SUITES:-$(ls suites/paper-gpu-*.yaml suites/gpu-*.yaml)}
# shellcheck disable=SC2086  # PACK_SUITES is a list of paths
CORPUS=$(HLM_DATA_ROOT="$DATA" "$PY" tools/gpu_corpus_files.py $PACK_SUITES)
GLUE="glue/CoLA glue/SST-2 glue/MRPC glue/STS-B glue/RTE"
PARTS="$CORPUS $GLUE lambada crows_pairs pubmedqa superglue/BoolQ"
rm -rf "$CARRY" && mkdir -p "$CARRY/wheels"
STAGE=$(mktemp -d) && trap 'rm -rf "$STAGE"' EXIT
"$PY" tools/trim_wordnet.py "$DATA/wordnet" "$STAGE/wordnet" > /dev/null
echo "packing $(echo "$CORPUS" | wc -l) corpus files and the task data from $DATA"
# shellcheck disable=SC2086  # PARTS is a list of paths
tar -C "$DATA" -cf - $PARTS -C "$STAGE" wordnet | xz -T0 -9e > "$CARRY/data.tar.xz"  # -9e: 4 % smaller than -6
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
grep -v '^\s*#' tools/gpu-wheels.txt | grep -v '^\s*$' | while read -r spec; do
    # a binary wheel for the GPU machine's Python, else (pure-Python sdists) a wheel built here
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp "${PLATFORMS[@]}" -d "$CARRY/wheels" "$spec" 2>/dev/null \
        || "$PY" -m pip wheel -q --no-deps -w "$CARRY/wheels" "$spec" 2>/dev/null \
        || { echo "gpu-pack: cannot get $spec" >&2; exit 2; }
done
"$PY" tools/slim_wheel.py "$CARRY"/wheels/lm_eval-*.whl --drop-subfolders lm_eval/tasks
# what travels: the working tree (tracked and untracked-not-ignored files) and the carry
# (bytes, not disk blocks: the tree's many small leaderboard files take a block each on disk)
carry_b=$(du -sb "$CARRY" | cut -f1)
tree_b=$(git ls-files -z -co --exclude-standard | du -c -b --apparent-size --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
MiB=1048576
total_mib=$(( (carry_b + tree_b + MiB - 1) / MiB ))
echo "$CARRY: $(( carry_b / MiB )) MiB ($(ls "$CARRY/wheels" | wc -l) wheels); with the working tree's $(( tree_b / MiB )) MiB: ${total_mib} MiB"
if [ "$total_mib" -gt 63 ]; then
    echo "gpu-pack: ${total_mib} MiB would travel, over the 64 MiB a call carries. The corpus files are what the suites read and cannot be fewer: make the repository smaller, or give GPU_PACK_SUITES only the suites to run" >&2
    exit 2
fi
