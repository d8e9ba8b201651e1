"""Checkpoints: plain Hugging Face model folders, written atomically.

A checkpoint folder holds `model.safetensors`, `config.json`, the tokenizer files and
`hlm_metadata.json` (objective, preset, steps, tokens seen, FLOPs, wall seconds, seed,
versions). Intermediate checkpoints also hold `training_state.pt` (optimizer, scheduler,
counters) for `--resume`. The folder is written under a temporary name and renamed, so a killed
run never leaves a half-written checkpoint.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from zoo.errors import UserError

METADATA = "hlm_metadata.json"
STATE = "training_state.pt"


def versions() -> dict[str, str]:
    import tokenizers
    import transformers

    import zoo

    return {
        "zoo": zoo.__version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "python": platform.python_version(),
    }


def atomic_dir_write(path: Path, write: Any) -> Path:
    """Call write(tmp_dir), then move tmp_dir to `path` (replacing any previous folder)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{path.name}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        write(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = path.parent / f".old-{path.name}-{os.getpid()}"
    if path.exists():
        os.rename(path, old)
    os.rename(tmp, path)
    if old.exists():
        shutil.rmtree(old)
    return path


def save_checkpoint(
    path: Path,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    metadata: dict[str, Any],
    training_state: dict[str, Any] | None = None,
) -> Path:
    def write(tmp: Path) -> None:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / METADATA).write_text(
            json.dumps({**metadata, "versions": versions()}, indent=2, default=str)
        )
        if training_state is not None:
            torch.save(training_state, tmp / STATE)

    return atomic_dir_write(path, write)


def read_metadata(path: str | Path) -> dict[str, Any]:
    f = Path(path) / METADATA
    if not f.is_file():
        return {}
    return dict(json.loads(f.read_text()))


def load_model(name_or_path: str) -> PreTrainedModel:
    """A checkpoint (local folder or hub id) as ForMaskedLM (encoder) or ForCausalLM (decoder)."""
    p = Path(name_or_path)
    if not p.exists() and (
        name_or_path.startswith((".", "/"))
        or (os.sep in name_or_path and name_or_path.count("/") > 1)
    ):
        raise UserError(f"checkpoint not found: {name_or_path}")
    try:
        config = AutoConfig.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load checkpoint {name_or_path!r}: {exc}") from None
    auto = AutoModelForMaskedLM if config.model_type == "bert" else AutoModelForCausalLM
    return auto.from_pretrained(name_or_path)


def list_checkpoints(output_dir: Path) -> list[Path]:
    """Intermediate checkpoints (with training state), oldest first."""
    d = Path(output_dir) / "checkpoints"
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if p.name.startswith("step-") and (p / STATE).is_file())
