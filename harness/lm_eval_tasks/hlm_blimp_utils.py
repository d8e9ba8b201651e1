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


def _root() -> Path:
    return Path(os.environ.get("HLM_DATA_ROOT", "../shared/data")).expanduser().resolve()


def _data_file(*parts: str) -> Path:
    path = _root().joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: set HLM_DATA_ROOT to the data root")
    return path


def _dataset(rows: list[dict[str, str]]) -> datasets.DatasetDict:
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def blimp(**_: Any) -> datasets.DatasetDict:
    """Every paradigm's pairs (`blimp/<paradigm>.jsonl`, the summaries left out), in paradigm
    order, as the `test` split; the paradigms' files differ in their other columns, so these
    five are read, as text."""
    names = sorted(p.name for p in (_root() / "blimp").glob("*.jsonl"))
    names = [n for n in names if not n.endswith("_summary.jsonl")]
    if not names:
        raise FileNotFoundError(f"{_root() / 'blimp'}: no BLiMP paradigms; set HLM_DATA_ROOT")
    rows = []
    for name in names:
        for line in _data_file("blimp", name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                pair = json.loads(line)
                rows.append({c: str(pair[c]) for c in COLUMNS})
    return _dataset(rows)
