"""The dataset loader `flores_eng_ppl.yaml` names (`custom_dataset: !function`): the English
FLORES-200 devtest sentences under $HLM_DATA_ROOT (default ../shared/data), one per line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import datasets


def flores_eng(**_: Any) -> datasets.DatasetDict:
    root = Path(os.environ.get("HLM_DATA_ROOT", "../shared/data")).expanduser().resolve()
    path = root / "flores200" / "devtest" / "eng_Latn.devtest"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: set HLM_DATA_ROOT to the data root")
    return datasets.load_dataset("text", data_files={"test": str(path)})  # type: ignore[return-value]
