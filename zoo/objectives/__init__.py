"""Pretraining objectives: the registry, the built-ins, and the public `cwt_loss`.

Add your own from a file of yours (no package edit), then pass ``--plugins my_obj.py``:

    from zoo.objectives import OBJECTIVES, Objective, contrastive_flops

    OBJECTIVES.add("my-obj", Objective("my-obj", my_loss, needs_head=False, flops=contrastive_flops))

An objective with options of its own declares them as a `LossOptions` subclass
(``options=MyOptions``); a suite or config sets them under ``loss:``.
"""

from zoo.objectives.base import (
    LossInputs,
    LossOptions,
    LossShape,
    Objective,
    VocabHead,
    contrastive_flops,
    vocab_ce_flops,
)
from zoo.objectives.builtin import register_builtin_objectives
from zoo.objectives.cwt import DUPLICATE_MODES, cwt_loss
from zoo.registry import Registry

OBJECTIVES: Registry[Objective] = Registry("objective")
register_builtin_objectives(OBJECTIVES)

__all__ = [
    "DUPLICATE_MODES",
    "OBJECTIVES",
    "LossInputs",
    "LossOptions",
    "LossShape",
    "Objective",
    "VocabHead",
    "contrastive_flops",
    "cwt_loss",
    "vocab_ce_flops",
]
