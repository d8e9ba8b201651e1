"""What an objective declares: its loss options, its FLOPs, where its loss function lives.

An `Objective` is a pure loss function plus a declaration of what it needs from the model:

- ``needs_head``: the vocabulary projection (weight-tied LM head). A headless objective
  (``needs_head=False``) is never handed the head, so no [K, V] tensor can exist in its step.
- ``needs_output_embeddings``: a separate (untied) target-embedding matrix [V, D], as in NCE
  without weight tying. The model keeps it as its (untied) output embeddings.
- ``options``: the model of the options its loss reads, and of no other (`ObjectiveOptions`
  subclassed: `VocabularyOptions` for ce, `ContrastiveOptions` for cwt and nce, `LossOptions`
  for both). A suite or a config sets them under ``loss:``; a key the model lacks is refused
  (`Objective.read_options`): it would give the run another key and the same weights.
- ``flops``: the analytic forward FLOPs of its loss term for a `LossShape` (zoo.flops adds
  the body and multiplies by 3 for training).

The training step selects the K positions (masked tokens for MLM, next-token positions for
CLM), runs the body once, and calls ``objective.loss(LossInputs(...), options)``
(`zoo.objectives.base`).

Nothing here imports torch: the built-ins are declared at the bottom with their loss named as
"module:function" (`DeferredLoss`, imported at the first call), so that the configuration and
`hlm pretrain --help` know every objective and its options without loading torch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from zoo.registry import Registry, resolve_target
from zoo.settings import Settings

if TYPE_CHECKING:
    import torch
    from torch import Tensor

    from zoo.objectives.base import LossInputs

Duplicates = Literal["keep", "mask", "unique"]
Impl = Literal["auto", "plain", "chunked", "recompute", "torch", "cce", "liger"]
CEImpl = Literal["plain", "chunked", "recompute", "torch", "cce", "liger"]
Negatives = Literal["local", "global"]
# the dtype of a loss's score products (the head's logits, CWT's [K, K]) under autocast
ScoreDtype = Literal["autocast", "fp32"]


class ObjectiveOptions(Settings):
    """The options of an objective that reads none. Every objective's options model is a
    subclass holding the fields its loss reads, and nothing else: a suite or config sets them
    under ``loss:``, and a key the model lacks is refused by name (`Objective.read_options`).
    A plugin objective declares its own fields on a subclass (see examples/cosine_cwt.py).
    """


class _BothLosses(ObjectiveOptions):
    """The options the vocabulary CE and the contrastive loss both read."""

    chunk: int = Field(1024, gt=0, description="rows per block of the chunked losses")
    score_dtype: ScoreDtype = Field(
        "autocast",
        description="the score products of both losses (the head's logits, the contrastive "
        "[K, K]) under bf16: in autocast's dtype, as a Hugging Face head computes its logits, "
        "or in fp32; the softmax is fp32 either way, and without bf16 all is fp32",
    )


class VocabularyOptions(_BothLosses):
    """What the vocabulary cross-entropy reads (`ce`)."""

    ce_impl: CEImpl = Field(
        "plain",
        description="vocabulary CE at the selected positions: plain [K, V], chunked, recompute, "
        "torch, or (CUDA, where installed) cce / liger",
    )


class ContrastiveOptions(_BothLosses):
    """What the contrastive losses read (`cwt`, `nce`)."""

    temperature: float = Field(1.0, gt=0, description="contrastive scores are divided by it")
    duplicates: Duplicates = Field(
        "keep",
        description="targets repeated in a batch: keep them as negatives (the paper), mask them, "
        "or contrast against the unique targets",
    )
    cwt_impl: Impl = Field(
        "auto",
        description="contrastive loss kernel: plain [K, K], chunked, recompute, torch, auto by "
        "size, or (CUDA, where installed) cce / liger",
    )
    negatives: Negatives = Field(
        "local",
        description="contrastive negatives: this process's batch, or every rank's batch "
        "all-gathered (torchrun; same as local in one process)",
    )


class LossOptions(VocabularyOptions, ContrastiveOptions):
    """Every built-in loss option: what `ce+cwt` reads (both losses). A run's key names them
    all, at their defaults where its objective lacks one (`zoo.train.identity`)."""


BUILT_IN_DEFAULTS: dict[str, Any] = LossOptions().model_dump(mode="json")


def built_in_option(options: ObjectiveOptions, name: str) -> Any:
    """Built-in option `name` of `options` where its objective reads it, else that option's
    default, which is how an objective that lacks it behaves (ce's negatives are local)."""
    return getattr(options, name) if name in type(options).model_fields else BUILT_IN_DEFAULTS[name]


@dataclass(frozen=True)
class LossShape:
    """The sizes a loss term's FLOP count depends on.

    k: selected positions; hidden: D; vocab: V; head_transform: whether the LM head applies a
    [D, D] transform before the projection (BERT's), which costs 2 K D^2 more.
    """

    k: int
    hidden: int
    vocab: int
    head_transform: bool


def vocab_ce_flops(s: LossShape) -> float:
    """Forward FLOPs of the vocabulary projection at K rows: 2 K D V (+ 2 K D^2 transform)."""
    return 2.0 * s.k * s.hidden * s.vocab + (2.0 * s.k * s.hidden**2 if s.head_transform else 0.0)


def contrastive_flops(s: LossShape) -> float:
    """Forward FLOPs of K x K in-batch scores: 2 K^2 D."""
    return 2.0 * s.k * s.k * s.hidden


LossFn = Callable[
    ["LossInputs", Any], dict[str, "Tensor"]
]  # Any: the objective's own options model
FlopsFn = Callable[[LossShape], float]


@dataclass(frozen=True)
class Objective:
    """A registered pretraining objective.

    ``loss`` returns a dict with at least ``"loss"`` (the scalar to minimise); other entries
    (e.g. ``"ce"``, ``"cwt"``) are logged. ``loss`` receives an instance of ``options``, the
    model of the options it reads (`ObjectiveOptions` for none).
    """

    name: str
    loss: LossFn
    needs_head: bool
    flops: FlopsFn
    needs_output_embeddings: bool = False
    options: type[ObjectiveOptions] = ObjectiveOptions
    description: str = ""

    @property
    def headless(self) -> bool:
        return not self.needs_head

    def lacks(self, values: Mapping[str, Any]) -> list[str]:
        """The built-in options of a `loss:` mapping its options model has no field for, set
        away from their defaults (at a default, one means nothing: a record written when
        every objective carried all of them, or a suite's shared `loss:`)."""
        own = self.options.model_fields
        return [
            k
            for k, v in values.items()
            if k not in own and k in BUILT_IN_DEFAULTS and v != BUILT_IN_DEFAULTS[k]
        ]

    def read_options(self, values: Mapping[str, Any]) -> ObjectiveOptions:
        """A `loss:` mapping as this objective's options: the one place options are read. A
        built-in option it lacks is refused (`lacks_message`); any other key it lacks is
        refused by pydantic as unknown, with the close names; each value's range checked."""
        if lacked := self.lacks(values):
            raise ValueError(self.lacks_message(lacked))
        own = self.options.model_fields
        kept = {k: v for k, v in values.items() if k in own or k not in BUILT_IN_DEFAULTS}
        return self.options.model_validate(kept)

    def options_from(self, other: ObjectiveOptions) -> ObjectiveOptions:
        """Its options, taking from `other` (another objective's) the values of the fields
        both hold: a headless run's head CE at evaluation reads the run's chunk and
        score_dtype; a throughput cell's baseline twin its shared options."""
        own = self.options.model_fields
        return self.options.model_validate(
            {k: v for k, v in other.model_dump().items() if k in own}
        )

    def lacks_message(self, names: list[str]) -> str:
        """Why `names` (from `lacks`) are refused, and what the objective does read."""
        reads = ", ".join(sorted(self.options.model_fields))
        return (
            f"the objective {self.name!r} does not read {', '.join(names)} (it reads "
            f"{reads or 'no option'}): another value gives the run another pretraining key "
            f"and the same weights; leave {'it' if len(names) == 1 else 'them'} unset"
        )


@dataclass(frozen=True)
class DeferredLoss:
    """A loss function named "module:function", imported at its first call (a plugin passes
    its function itself; this is for declarations that must not import torch)."""

    target: str

    def resolve(self) -> LossFn:
        fn: LossFn = resolve_target(self.target)  # imported once, then remembered
        return fn

    def __call__(self, batch: LossInputs, options: Any) -> dict[str, Tensor]:
        return self.resolve()(batch, options)


def plain_loss(loss: LossFn) -> LossFn:
    """The function itself, imported now where `loss` is deferred: what a compiled step calls
    (Dynamo would trace the import cache on every step)."""
    return loss.resolve() if isinstance(loss, DeferredLoss) else loss


def _both_flops(s: LossShape) -> float:
    return vocab_ce_flops(s) + contrastive_flops(s)


def register_builtin_objectives(registry: Registry[Objective]) -> None:
    """ce, cwt, ce+cwt and nce, their losses in `zoo.objectives.builtin`."""
    losses = "zoo.objectives.builtin"
    for obj in (
        Objective(
            "ce",
            DeferredLoss(f"{losses}:ce_loss"),
            needs_head=True,
            flops=vocab_ce_flops,
            description="classical LM: cross-entropy over the vocabulary "
            "through the weight-tied head",
            options=VocabularyOptions,
        ),
        Objective(
            "cwt",
            DeferredLoss(f"{losses}:cwt_objective"),
            needs_head=False,
            flops=contrastive_flops,
            description="headless: Contrastive Weight Tying with in-batch negatives "
            "(no vocabulary projection)",
            options=ContrastiveOptions,
        ),
        Objective(
            "ce+cwt",
            DeferredLoss(f"{losses}:ce_plus_cwt"),
            needs_head=True,
            flops=_both_flops,
            description="ablation: cross-entropy + CWT, summed",
            options=LossOptions,
        ),
        Objective(
            "nce",
            DeferredLoss(f"{losses}:nce_objective"),
            needs_head=False,
            flops=contrastive_flops,
            needs_output_embeddings=True,
            description="ablation: contrastive against a separate target-embedding matrix "
            "(no weight tying)",
            options=ContrastiveOptions,
        ),
    ):
        registry.add(obj.name, obj)


def product_dtype(device_type: str, score_dtype: ScoreDtype) -> torch.dtype:
    """The dtype a loss's score products run in on `device_type`: autocast's where autocast
    is on there and `score_dtype` is "autocast" (16-bit tensor-core products accumulating in
    fp32, as a Hugging Face head computes its logits), else fp32. Both objectives use it, so a
    bf16 comparison gives neither loss more precise, or slower, products than the other."""
    import torch

    if score_dtype == "autocast" and torch.is_autocast_enabled(device_type):
        return torch.get_autocast_dtype(device_type)
    return torch.float32
