"""The resolved training numbers of a run: each unset config value taken from the preset's
paper recipe (Appendix D), the global batch split into micro-batches and accumulation steps.

    recipe = resolve_recipe(cfg, spec, world_size)   # recipe.lr, recipe.grad_accum, ...
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from zoo.errors import UserError
from zoo.models.spec import ModelSpec
from zoo.objectives import OBJECTIVES
from zoo.train.config import PretrainConfig, Schedule


class ResolvedRecipe(BaseModel):
    """Every training number, after the preset defaults are filled in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int
    batch_size: int  # global: sequences per optimizer step
    micro_batch_size: int  # per process and forward pass
    grad_accum: int  # micro-batches per process and step
    seq_len: int
    lr: float
    weight_decay: float
    betas: tuple[float, float]
    eps: float
    grad_clip: float
    schedule: Schedule
    warmup_steps: int
    min_lr_ratio: float = 0.0


def split_batch(
    batch_size: int, world_size: int, seq_len: int, micro: int | None, micro_tokens: int
) -> tuple[int, int]:
    """(micro-batch size, accumulation steps) with batch = micro x accumulation x world: the
    given micro-batch, or the largest divisor of each process's share within `micro_tokens`."""
    if batch_size % world_size:
        raise UserError(f"batch_size {batch_size} does not split over {world_size} processes")
    share = batch_size // world_size
    if micro is None:
        most = max(1, min(share, micro_tokens // seq_len))
        micro = next(d for d in range(most, 0, -1) if share % d == 0)
    if share % micro:
        raise UserError(
            f"micro_batch_size {micro} does not divide each process's {share} sequences "
            f"(batch_size {batch_size} over {world_size} processes)"
        )
    return micro, share // micro


def resolve_recipe(cfg: PretrainConfig, spec: ModelSpec, world_size: int = 1) -> ResolvedRecipe:
    """The config's training numbers, each unset one taken from the preset's paper recipe;
    the global batch split into micro-batches and accumulation for `world_size` processes.
    A headless objective takes the preset's headless values (`Recipe.for_objective`)."""
    r = spec.recipe.for_objective(OBJECTIVES.get(cfg.objective).headless)
    batch = r.batch_size if cfg.batch_size is None else cfg.batch_size
    seq_len = r.seq_len if cfg.seq_len is None else cfg.seq_len
    micro, accum = split_batch(batch, world_size, seq_len, cfg.micro_batch_size, cfg.micro_tokens)
    return ResolvedRecipe(
        steps=r.steps if cfg.steps is None else cfg.steps,
        batch_size=batch,
        micro_batch_size=micro,
        grad_accum=accum,
        seq_len=seq_len,
        lr=r.lr if cfg.lr is None else cfg.lr,
        weight_decay=r.weight_decay if cfg.weight_decay is None else cfg.weight_decay,
        betas=r.betas if cfg.betas is None else cfg.betas,
        eps=r.eps if cfg.eps is None else cfg.eps,
        grad_clip=r.grad_clip if cfg.grad_clip is None else cfg.grad_clip,
        schedule=r.schedule if cfg.schedule is None else cfg.schedule,
        warmup_steps=r.warmup_steps if cfg.warmup_steps is None else cfg.warmup_steps,
        min_lr_ratio=r.min_lr_ratio if cfg.min_lr_ratio is None else cfg.min_lr_ratio,
    )


def unreached_peak(cfg: PretrainConfig, recipe: ResolvedRecipe, spec: ModelSpec) -> str | None:
    """Why the schedule never reaches its peak, where the preset's warm-up (left unset) is not
    below the steps set: its recipe's warm-up is for its own, longer run."""
    if cfg.warmup_steps is not None or not 0 < recipe.steps <= recipe.warmup_steps:
        return None
    own = spec.recipe
    share = max(1, round(recipe.steps * recipe.warmup_steps / own.steps))
    return (
        f"warmup_steps: the preset {spec.name}'s {recipe.warmup_steps} (for its recipe's "
        f"{own.steps} steps) is not below steps {recipe.steps}: the learning rate climbs for "
        f"the whole run, never reaching lr {recipe.lr:g} nor decaying; set warmup_steps (the "
        f"recipe's share of {recipe.steps} steps is {share})"
    )
