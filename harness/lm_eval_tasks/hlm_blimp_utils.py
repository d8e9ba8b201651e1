"""The loader `hlm_blimp.yaml` names (`!function hlm_blimp_utils.blimp`): BLiMP's 67
paradigms under `$HLM_DATA_ROOT/blimp/` as one `test` split, for plain lm-eval:

    HLM_DATA_ROOT=/path/to/data lm_eval --model hf --model_args pretrained=CKPT \
        --include_path harness/lm_eval_tasks --tasks hlm_blimp

Like `hlm_utils.py`, this file imports nothing of the project (lm-eval imports it by path).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import datasets

COLUMNS = ["sentence_good", "sentence_bad", "field", "UID", "pairID"]


def blimp(**_: Any) -> datasets.DatasetDict:
    """Every paradigm's pairs (`blimp/<paradigm>.jsonl`, the summaries left out), in paradigm
    order, as the `test` split."""
    root = Path(os.environ.get("HLM_DATA_ROOT", "../shared/data")).expanduser().resolve()
    folder = root / "blimp"
    files = sorted(str(p) for p in folder.glob("*.jsonl") if not p.stem.endswith("_summary"))
    if not files:
        raise FileNotFoundError(f"{folder}: no BLiMP paradigms; set HLM_DATA_ROOT")
    rows = []  # the paradigms' files differ in their other columns: these five, as text
    for f in files:
        for line in Path(f).read_text(encoding="utf-8").splitlines():
            if line.strip():
                pair = json.loads(line)
                rows.append({c: str(pair[c]) for c in COLUMNS})
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})
