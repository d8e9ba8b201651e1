"""One benchmark variant stepping on a fixed batch: shared by `hlm bench`, its fresh-process
probe and the `throughput` task.

    s = Stepper(get_spec("bert-small", 50_000), variant("cwt", sparse_embeddings=True), 32, 128)
    seconds = s.step()

A variant is a pretraining config (`PretrainConfig`: objective, loss options, embedding
update, bf16, last-layer pruning, dropout masks, compile), so a benchmark measures a run's
settings by their own names. Each step is the training loop's own
(`zoo.train.update.optimizer_step`): micro-batches, gradient norm and clipping,
the non-finite guard, the optimizer and its schedule.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError
from torch import Tensor, nn
from torch.optim.lr_scheduler import LRScheduler
from transformers import PreTrainedModel

from zoo.data.batches import IGNORE, clm_labels
from zoo.errors import UserError, validation_problems
from zoo.flops import body_forward_flops, train_step_flops
from zoo.models.fast_attention import use_fast_dropout
from zoo.models.spec import ModelSpec
from zoo.objectives import OBJECTIVES
from zoo.train.config import PretrainConfig
from zoo.train.distributed import DistContext
from zoo.train.guard import NonFiniteGuard
from zoo.train.optim import make_optimizer
from zoo.train.recipe import ResolvedRecipe
from zoo.train.run import Counters
from zoo.train.schedule import make_scheduler
from zoo.train.step import TrainModule, last_layer_queries, prepare_for_objective
from zoo.train.update import MicroBatch, optimizer_step

# PretrainConfig asks for a preset and an output folder; a variant runs on any preset (the
# Stepper's spec, which it records) and writes nothing.
_ANY_PRESET, _NO_OUTPUT = "bert-tiny", ""


@dataclass(frozen=True)
class Variant:
    """What differs between the training steps a benchmark compares.

    config: the pretraining settings of the step (its objective, `loss`, `sparse_embeddings`,
    `bf16`, `prune_last_layer`, `fast_dropout`, `compile`), as a run reads them.
    hf_default: the reference vanilla step of Hugging Face (`model(input_ids, labels=...)`),
    which projects every position onto the vocabulary and runs the whole last layer.
    cuda_graphs: with `compile`, its "reduce-overhead" mode, which replays the step's kernels
    as CUDA graphs on a GPU (one launch for the whole forward and backward).
    """

    config: PretrainConfig
    hf_default: bool = False
    cuda_graphs: bool = False

    def __post_init__(self) -> None:
        if self.cuda_graphs and not self.config.compile:
            raise ValueError("a variant with cuda_graphs needs compile=True: torch.compile graphs")

    def as_json(self) -> dict[str, Any]:
        """The variant as JSON values (`from_json` reads it back in another process)."""
        return {
            "config": self.config.as_given(),
            "hf_default": self.hf_default,
            "cuda_graphs": self.cuda_graphs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Variant:
        """The variant `as_json` wrote; a config this process cannot read (an objective whose
        plugin it has not imported) is a UserError naming what is wrong."""
        try:
            config = PretrainConfig.model_validate(data["config"])
        except ValidationError as exc:
            problems = validation_problems(exc, "benchmark variant", model=PretrainConfig)
            raise UserError("; ".join(problems)) from None
        return cls(config, bool(data["hf_default"]), bool(data["cuda_graphs"]))

    def changed(self, **settings: Any) -> Variant:
        """This variant with some pretraining `settings` changed (checked as `variant`'s)."""
        config = PretrainConfig.model_validate({**self.config.as_given(), **settings})
        return replace(self, config=config)


def variant(
    objective: str = "cwt", *, hf_default: bool = False, cuda_graphs: bool = False, **settings: Any
) -> Variant:
    """A variant at `PretrainConfig`'s defaults but for `objective` and `settings`, named as
    its fields (`sparse_embeddings=True`, `loss=LossOptions(ce_impl="chunked")`) and checked by
    it: a name it lacks is refused."""
    given = {"preset": _ANY_PRESET, "output_dir": _NO_OUTPUT, "objective": objective}
    config = PretrainConfig.model_validate({**given, **settings})
    return Variant(config, hf_default, cuda_graphs)


def synthetic_batch(spec: ModelSpec, batch: int, seq: int, seed: int) -> tuple[Tensor, Tensor]:
    """Random tokens with 15% MLM targets (encoder) or next-token labels (decoder)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(8, spec.vocab_size, (batch, seq), generator=g)  # (B, T)
    if spec.kind == "decoder":
        return ids, clm_labels(ids)
    pick = torch.rand(ids.shape, generator=g) < 0.15
    return ids.masked_fill(pick, 4), ids.masked_fill(~pick, IGNORE)


def _recipe(batch: int, seq: int) -> ResolvedRecipe:
    return ResolvedRecipe(
        steps=1,
        batch_size=batch,
        micro_batch_size=batch,
        grad_accum=1,
        seq_len=seq,
        lr=1e-4,
        weight_decay=0.01,
        betas=(0.9, 0.999),
        eps=1e-8,
        grad_clip=1.0,
        schedule="constant",
        warmup_steps=0,
    )


class HFStep(nn.Module):
    """Hugging Face's own training step: the model's loss from `labels` (an encoder's MLM
    labels; a decoder shifts its inputs itself), every position through the head."""

    def __init__(self, model: PreTrainedModel, encoder: bool) -> None:
        super().__init__()
        self.model, self.encoder = model, encoder

    def forward(self, inputs: Tensor, labels: Tensor) -> dict[str, Tensor]:
        hf_labels = labels if self.encoder else inputs  # (B, T)
        return {"loss": self.model(input_ids=inputs, labels=hf_labels).loss}


class Stepper:
    """A model + objective + optimizer of one `Variant`, stepping on a fixed batch with the
    training loop's step (it is a `zoo.train.run.Stepping`)."""

    def __init__(
        self,
        spec: ModelSpec,
        variant: Variant,
        batch: int,
        seq: int,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        torch.manual_seed(seed)
        self.spec, self.variant = spec, variant
        self.cfg = variant.config.model_copy(update={"preset": spec.name})
        self.objective = OBJECTIVES.get(self.cfg.objective)
        self.ctx = DistContext(device=torch.device(device))
        self.model = self._model()
        self.module = self._module()
        self.recipe = _recipe(batch, seq)
        self.optimizer = make_optimizer(
            self.model, spec, self.objective, self.recipe, self.cfg.sparse_embeddings
        )
        self.scheduler: LRScheduler = make_scheduler(self.optimizer, "constant", 0, 1)
        self.counters = Counters()
        self.guard = NonFiniteGuard(
            Path("benchmark"), self.counters, 0, self.recipe.lr, self.recipe.grad_clip
        )
        inputs, labels = synthetic_batch(spec, batch, seq, seed)
        self.batch = [MicroBatch.of(inputs, labels, self.ctx.device)]
        self.k = self.batch[0].selected
        self.flops = self._flops(batch, seq, labels)
        self.n_params = sum(p.numel() for p in self.model.parameters())

    @property
    def trainable(self) -> list[nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def _model(self) -> PreTrainedModel:
        model = self.spec.build(tie_word_embeddings=not self.objective.needs_output_embeddings)
        prepare_for_objective(model, self.spec, self.objective)
        model.to(self.ctx.device)  # type: ignore[arg-type]  # transformers types .to as a wrapper
        if self.cfg.fast_dropout:  # as pretraining does by default
            use_fast_dropout(model)
        return model

    def _module(self) -> nn.Module:
        """The step's module: Hugging Face's, or pretraining's `TrainModule`, compiled where
        the config says."""
        if self.variant.hf_default:
            return HFStep(self.model, self.spec.is_encoder)
        module = TrainModule(
            self.model, self.spec, self.objective, self.cfg.loss, self.cfg.prune_last_layer
        )
        if not self.cfg.compile:
            return module
        mode = "reduce-overhead" if self.variant.cuda_graphs else None
        return torch.compile(module, mode=mode)  # type: ignore[return-value]

    def _flops(self, batch: int, seq: int, labels: Tensor) -> float:
        spec = self.spec
        if self.variant.hf_default:  # every position through the head
            extra = 2.0 * spec.hidden_size * spec.hidden_size if spec.is_encoder else 0.0
            head = batch * seq * (2.0 * spec.hidden_size * spec.vocab_size + extra)
            return 3.0 * (body_forward_flops(spec, batch, seq) + head)
        queries = last_layer_queries(spec, labels != IGNORE, self.cfg.prune_last_layer)
        return train_step_flops(spec, self.objective, batch, seq, self.k, queries)

    def step(self) -> float:
        """One training step; its wall seconds (CUDA-synchronised on a GPU)."""
        t = time.perf_counter()
        if self.variant.cuda_graphs:  # a new step: the last replay's outputs may be overwritten
            torch.compiler.cudagraph_mark_step_begin()
        optimizer_step(self, self.module, self.batch, self.guard)
        self.counters.step += 1
        if self.ctx.device.type == "cuda":  # the kernels were only queued
            torch.cuda.synchronize(self.ctx.device)
        seconds = time.perf_counter() - t
        self.guard.settle()  # as the loop's log step does; a skipped step raises (max_skips 0)
        return seconds
