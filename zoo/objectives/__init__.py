"""Pretraining objectives: the registry, the built-ins, and the public `cwt_loss`.

Add your own from a file of yours (no package edit), then pass ``--plugins my_obj.py``:

    from zoo.objectives import OBJECTIVES, Objective, contrastive_flops

    OBJECTIVES.add(
        "my-obj", Objective("my-obj", my_loss, needs_head=False, flops=contrastive_flops)
    )

An objective with options declares them as an `ObjectiveOptions` subclass holding the fields
its loss reads (``options=MyOptions``); a suite or config sets them under ``loss:``.

Importing this package does not import torch: the registry holds declarations
(`zoo.objectives.declared`) whose built-in losses load at their first call. The names that
need torch (`cwt_loss`, `LossInputs`, `VocabHead`) are imported when first read from here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from zoo.objectives.declared import (
    ContrastiveOptions,
    DeferredLoss,
    LossOptions,
    LossShape,
    Objective,
    ObjectiveOptions,
    VocabularyOptions,
    contrastive_flops,
    register_builtin_objectives,
    vocab_ce_flops,
)
from zoo.registry import Registry

if TYPE_CHECKING:
    from zoo.objectives.base import LossInputs, VocabHead
    from zoo.objectives.cwt import cwt_loss

OBJECTIVES: Registry[Objective] = Registry("objective")
register_builtin_objectives(OBJECTIVES)

# name -> the module that defines it, for the torch-bound names read from this package
_WITH_TORCH = {
    "cwt_loss": "zoo.objectives.cwt",
    "LossInputs": "zoo.objectives.base",
    "VocabHead": "zoo.objectives.base",
}


def __getattr__(name: str) -> Any:
    if name in _WITH_TORCH:
        return getattr(importlib.import_module(_WITH_TORCH[name]), name)
    raise AttributeError(f"module 'zoo.objectives' has no attribute {name!r}")


__all__ = [
    "OBJECTIVES",
    "ContrastiveOptions",
    "DeferredLoss",
    "LossInputs",
    "LossOptions",
    "LossShape",
    "Objective",
    "ObjectiveOptions",
    "VocabHead",
    "VocabularyOptions",
    "contrastive_flops",
    "cwt_loss",
    "vocab_ce_flops",
]
