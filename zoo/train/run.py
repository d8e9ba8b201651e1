"""The state of one training run, built by `zoo.train.setup` and advanced by `zoo.train.loop`.

`Run` holds what the stages produce (model, tokenizer, data, optimizer), `Counters` what a
checkpoint must carry to resume exactly (step, tokens, FLOPs, seconds), and `StopRule` which
of them ends the run. `Stepping` is what one optimizer step reads, a run or a benchmark's
stepper. `checkpoint_metadata` turns a run into the typed `hlm_metadata.json` of
its checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from zoo.data.batches import MaskingConfig, PackedBlocks
from zoo.flops import expected_k
from zoo.hardware import processor
from zoo.models.spec import ModelSpec
from zoo.objectives import Objective, ObjectiveOptions
from zoo.objectives.declared import built_in_option
from zoo.registry import defined_in
from zoo.train.budgets import planned_steps
from zoo.train.config import PretrainConfig
from zoo.train.distributed import DistContext
from zoo.train.metadata import CausalFinetune, CheckpointMetadata, ResumeRecord, TokenizerInfo
from zoo.train.recipe import ResolvedRecipe
from zoo.train.step import TrainModule


@dataclass
class Counters:
    """Progress of a run; saved in every checkpoint's training state."""

    step: int = 0
    tokens_seen: int = 0
    flops: float = 0.0
    wall_seconds: float = 0.0
    skipped_steps: int = 0  # steps whose update the non-finite guard skipped

    def state(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "tokens_seen": self.tokens_seen,
            "flops": self.flops,
            "wall_seconds": self.wall_seconds,
            "skipped_steps": self.skipped_steps,
        }


class Stepping(Protocol):
    """What one optimizer step reads and advances (`zoo.train.update.optimizer_step`): a `Run`,
    or a benchmark's `harness.bench.stepper.Stepper` on a fixed batch."""

    cfg: PretrainConfig
    ctx: DistContext
    spec: ModelSpec
    objective: Objective
    recipe: ResolvedRecipe
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    counters: Counters

    @property
    def trainable(self) -> list[torch.nn.Parameter]: ...


@dataclass
class Lineage:
    """What a run inherits from the checkpoint it starts from (causal fine-tuning)."""

    objective: Objective  # the pretraining objective the metadata records
    loss: dict[str, Any]
    pretrain_key: str | None = None
    causal_finetune: bool = False
    from_step: int = 0  # the pretraining step it starts from


@dataclass
class Run:
    cfg: PretrainConfig
    ctx: DistContext
    out: Path
    objective: Objective  # the objective this run trains with
    options: ObjectiveOptions
    spec: ModelSpec
    recipe: ResolvedRecipe
    model: PreTrainedModel
    step: TrainModule  # the model's training step (FSDP's root unit when sharded)
    tokenizer: PreTrainedTokenizerBase
    tokenizer_source: str
    special: dict[str, int]
    blocks: PackedBlocks  # (N, T) training sequences over the cached token stream
    val_blocks: PackedBlocks  # (M, T)
    masking: MaskingConfig
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    lineage: Lineage
    counters: Counters = field(default_factory=Counters)
    resumed: list[ResumeRecord] = field(default_factory=list)
    start_tokens: int = 0  # tokens seen before this run (the pretraining of a fine-tuned model)
    added_specials: list[str] = field(default_factory=list)  # added to a given tokenizer
    corpus_contents: str | None = None  # `TrainingCorpus.contents`, recorded in checkpoints

    @property
    def per_step(self) -> int:
        """Sequences per optimizer step, all processes and micro-batches."""
        return self.recipe.batch_size  # = micro x accumulation x world size

    @property
    def trainable(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]


def negatives_per_forward(run: Run) -> int:
    """K of one forward pass (the expected masked positions for an encoder), times the world
    size where every rank's targets are gathered."""
    r = run.recipe
    k = expected_k(run.spec, r.micro_batch_size, r.seq_len, run.cfg.mlm_probability)
    gathered = built_in_option(run.options, "negatives") == "global"
    return k * (run.ctx.world_size if gathered else 1)


def checkpoint_metadata(
    run: Run,
    validation: dict[str, float] | None = None,
    stopped_by: str | None = None,
    reached: list[str] | None = None,
) -> CheckpointMetadata:
    """The typed metadata of the run's current state."""
    cfg, c, lin = run.cfg, run.counters, run.lineage
    finetune = None
    if lin.causal_finetune:
        finetune = CausalFinetune(
            from_checkpoint=str(cfg.init_from),
            from_step=lin.from_step,
            steps=c.step,
            lr=run.recipe.lr,
            warmup_steps=run.recipe.warmup_steps,
            batch_size=run.per_step,
            tokens=c.tokens_seen - run.start_tokens,
            probe=cfg.freeze_body,
        )
    return CheckpointMetadata(
        kind=run.spec.kind,
        family=run.spec.family,
        preset=run.spec.name,
        objective=lin.objective.name,
        objective_source=defined_in(lin.objective.loss),
        headless=lin.objective.headless,
        loss=lin.loss,
        config=cfg.key_fields(),
        causal_finetune=finetune,
        pretrain_key=lin.pretrain_key,
        tokenizer=TokenizerInfo(
            source=run.tokenizer_source,
            vocab_size=len(run.tokenizer),
            added_specials=run.added_specials,
        ),
        vocab_size=run.spec.vocab_size,
        world_size=run.ctx.world_size,
        strategy=run.ctx.layout,
        device=run.ctx.device.type,
        hardware=processor(run.ctx.device.type),
        seq_len=run.recipe.seq_len,
        batch_size=run.per_step,
        negatives=negatives_per_forward(run),
        recipe=run.recipe,
        corpus=cfg.corpus,
        corpus_contents=run.corpus_contents,
        seed=cfg.seed,
        params=sum(p.numel() for p in run.model.parameters()),
        init_from=cfg.init_from,
        steps=c.step,
        tokens_seen=c.tokens_seen,
        train_flops=c.flops,
        wall_seconds=c.wall_seconds,
        stopped_by=stopped_by,
        skipped_steps=c.skipped_steps,
        resumed=run.resumed,
        reached=reached or [],
        validation=validation or {},
    )


@dataclass(frozen=True)
class StopRule:
    """When a run is done: at the first of `max_steps` optimizer steps, `max_tokens` training
    tokens, `max_flops` training FLOPs and `max_seconds` of training-loop wall time (the
    budgets a comparison holds equal: paper Table 1). Unset budgets never stop a run."""

    max_steps: int
    max_tokens: int | None = None
    max_flops: float | None = None
    max_seconds: float | None = None

    def reason(self, c: Counters) -> str | None:
        """The budget `c` has reached (steps first), or None while the run goes on."""
        for name, limit, value in (
            ("steps", self.max_steps, c.step),
            ("tokens", self.max_tokens, c.tokens_seen),
            ("flops", self.max_flops, c.flops),
            ("seconds", self.max_seconds, c.wall_seconds),
        ):
            if limit is not None and value >= limit:
                return name
        return None

    def done(self, c: Counters) -> bool:
        return self.reason(c) is not None

    def planned_steps(self, tokens_per_step: int) -> int:
        """The step the run stops at where its step or token budget decides
        (`zoo.train.budgets.planned_steps`)."""
        return planned_steps(self.max_steps, self.max_tokens, tokens_per_step)

    @classmethod
    def of(cls, run: Run) -> StopRule:
        cfg = run.cfg
        return cls(run.recipe.steps, cfg.max_tokens, cfg.max_flops, cfg.max_seconds)
