"""Pretraining objectives: the registry, the built-ins, and the public `cwt_loss`.

Add your own from a file of yours (no package edit), then pass ``--plugin my_obj.py``:

    from zoo.objectives import OBJECTIVES, Objective

    OBJECTIVES.add("my-obj", Objective("my-obj", my_loss, needs_head=False))
"""

from zoo.objectives.base import LossInputs, Objective, ObjectiveOptions, VocabHead
from zoo.objectives.builtin import register_builtin_objectives
from zoo.objectives.cwt import DUPLICATE_MODES, cwt_loss
from zoo.registry import Registry

OBJECTIVES: Registry[Objective] = Registry("objective")
register_builtin_objectives(OBJECTIVES)

__all__ = [
    "DUPLICATE_MODES",
    "OBJECTIVES",
    "LossInputs",
    "Objective",
    "ObjectiveOptions",
    "VocabHead",
    "cwt_loss",
]
