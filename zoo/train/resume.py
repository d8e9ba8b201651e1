"""`--resume`, honestly: continue the same run, or say why not.

Each setting's role is read from its field (`zoo.train.roles`). Those that define the weights
(objective and loss options, preset, seed, data, tokenizer, vocabulary, sequence length,
batch, optimiser constants, bf16, dropout masks) are compared with those the output folder
was started with (`config.yaml`); any difference is refused, each one named. Those a resume
may change (more steps, the learning rate and its schedule, clipping, budgets, micro-batches,
the attention kernel) are applied for real and recorded in the metadata as changed at the step
the run resumed from. Runtime settings (device, logging, evaluation points) are free. A bf16
run started before `loss.score_dtype` existed resumes only where its score products are
computed as they were then (`PretrainConfig.multiplies_as_before_score_dtype`). The key
names the corpus files, not their contents: a checkpoint whose recorded text differs from
the text now is not gone on from (`check_same_text`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from zoo.errors import UserError, ZooWarning
from zoo.train.atomic import checkpoint_problem, remove_leftovers
from zoo.train.config import PretrainConfig
from zoo.train.layout import STATE, checkpoint_step, list_checkpoints
from zoo.train.metadata import ResumeRecord, read_metadata
from zoo.train.roles import names_with_role
from zoo.train.run import Counters, Run
from zoo.train.safe_load import read_state
from zoo.train.sharded import SHARDED, load_sharded
from zoo.yaml_files import read_yaml_mapping


def resume_point(out: Path, resume: bool | str, before: int | None = None) -> Path | None:
    """The newest checkpoint whose files match their checksums (a warning names each newer
    one skipped, and why), or a clear error when there is none; `resume` as a path: that
    checkpoint of the run. With `before`, the newest verified one below that step, or None
    (the run then starts from its initialisation)."""
    for folder in (out, out / "checkpoints"):  # what a killed save left behind
        remove_leftovers(folder)
    if not resume:
        return None
    checkpoints = list_checkpoints(out)
    if isinstance(resume, str):
        return _named_checkpoint(out, Path(resume), checkpoints)
    if before is not None:
        earlier = [p for p in checkpoints if checkpoint_step(p) < before]
        return next((p for p in reversed(earlier) if checkpoint_problem(p) is None), None)
    skipped: list[tuple[Path, str]] = []
    for candidate in reversed(checkpoints):  # the newest checkpoint that verifies
        problem = checkpoint_problem(candidate)
        if problem is None:
            for name, why in skipped:
                warnings.warn(f"--resume: skipped {name}: {why}", ZooWarning, stacklevel=2)
            return candidate
        skipped.append((candidate, problem))
    if skipped:
        raise UserError(
            "--resume: no checkpoint verifies: "
            + "; ".join(f"{name}: {why}" for name, why in skipped)
        )
    if (out / "final").is_dir():
        raise UserError(
            f"--resume: {out}/final holds a finished run and {out}/checkpoints has no step-* "
            "folder with training state to continue from (set save_every to keep them)"
        )
    raise UserError(f"--resume: no checkpoint with training state under {out}/checkpoints")


def _named_checkpoint(out: Path, path: Path, checkpoints: list[Path]) -> Path:
    """`--resume PATH`: a verified checkpoint of this run with none newer beside it (the
    newer ones would mix with the continued run's on a later --resume)."""
    chosen = next((c for c in checkpoints if c.resolve() == path.resolve()), None)
    if chosen is None:
        names = ", ".join(str(c) for c in checkpoints) or "none"
        raise UserError(f"--resume {path}: not a checkpoint of {out} (it has: {names})")
    problem = checkpoint_problem(chosen)
    if problem is not None:
        raise UserError(f"--resume {path}: {problem}")
    newer = [c.name for c in checkpoints if checkpoint_step(c) > checkpoint_step(chosen)]
    if newer:
        raise UserError(
            f"--resume {path}: {out} has newer checkpoints ({', '.join(newer)}) that the "
            "continued run would mix with; move them out of checkpoints/ first"
        )
    return chosen


def started_config(out: Path) -> tuple[PretrainConfig, bool]:
    """The configuration the output folder's run was started with (its `config.yaml`), and
    whether that file was written before `loss.score_dtype` existed (it writes every loss
    option, so an older one lacks it)."""
    f = out / "config.yaml"
    if not f.is_file():
        raise UserError(f"--resume: {f} is missing: not an output folder of hlm pretrain")
    data = read_yaml_mapping(f, "config keys")
    loss = data.get("loss")
    before_score_dtype = isinstance(loss, dict) and "score_dtype" not in loss
    try:
        cfg = PretrainConfig.model_validate(
            {k: v for k, v in data.items() if k in PretrainConfig.model_fields}
        )
    except ValidationError as exc:
        raise UserError(f"{f}: not a configuration this headless-zoo reads ({exc})") from None
    return cfg, before_score_dtype


def _value(cfg: PretrainConfig, key: str) -> Any:
    value = getattr(cfg, key)
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def resume_changes(cfg: PretrainConfig, out: Path, checkpoint: Path) -> dict[str, list[Any]]:
    """{setting: [before, now]} of the changes a resume applies; a changed defining setting,
    or fewer steps than the checkpoint has made, is refused."""
    before, before_score_dtype = started_config(out)
    if before_score_dtype and not cfg.multiplies_as_before_score_dtype():
        raise UserError(
            f"--resume: {out} was started under bf16 before `loss.score_dtype` existed, when "
            "the contrastive and chunked losses multiplied in fp32 beside the head's bf16 "
            "logits; this code multiplies them as `loss.score_dtype` says, so the run would "
            "change its computation midway (use a new output_dir)"
        )
    refused = [
        f"{k}: {_value(before, k)!r} -> {_value(cfg, k)!r}"
        for k in names_with_role(PretrainConfig, "weights")
        if _value(before, k) != _value(cfg, k)
    ]
    if refused:
        raise UserError(
            "--resume: these settings define the run and differ from the ones it started with "
            f"(use a new output_dir): {'; '.join(refused)}"
        )
    step = checkpoint_step(checkpoint)
    if cfg.steps is not None and cfg.steps < step:
        raise UserError(f"--resume: steps {cfg.steps} is below the checkpoint's step {step}")
    return {
        k: [_value(before, k), _value(cfg, k)]
        for k in names_with_role(PretrainConfig, "resume")
        if _value(before, k) != _value(cfg, k)
    }


def check_same_text(
    checkpoint: Path, run_folder: Path, contents: str | None, sources: list[str]
) -> None:
    """Refuse to go on from `checkpoint` (resume it, remake a point of it, evaluate it as a
    cached run) where the training text it recorded has changed since: the run's key names
    its sources, not their contents. Unknown on either side (a Hub revision offline, an
    older checkpoint): no check."""
    recorded = read_metadata(checkpoint).corpus_contents
    if recorded is None or contents is None or recorded == contents:
        return
    raise UserError(
        f"{checkpoint}: the training text ({', '.join(sources)}) has changed since this run was "
        "trained on it; rows from it would describe other text. Restore the files, or move the "
        f"run folder {run_folder} away to train it again on the text as it is now"
    )


def restore(run: Run, checkpoint: Path, changes: dict[str, list[Any]]) -> None:
    """Load a checkpoint's model and optimizer state (sharded, resharded to this run's world
    size and strategy), schedule and counters into `run`, then apply the resume's changes:
    the schedule is the new recipe's, from the new peak. A change of world size or strategy
    is recorded with them."""
    if not (checkpoint / SHARDED).is_dir():
        raise UserError(
            f"--resume: {checkpoint} has no {SHARDED}/ training state (written by a headless-zoo "
            "before sharded checkpoints): resume it with that version, or start anew"
        )
    state = read_state(checkpoint)
    load_sharded(run, checkpoint / SHARDED)
    groups = len(state["scheduler"]["base_lrs"])
    if groups != len(run.optimizer.param_groups):
        raise UserError(
            f"{checkpoint / STATE}: scheduler: {groups} parameter groups, where this run's "
            f"optimizer has {len(run.optimizer.param_groups)}: another run's state"
        )
    run.scheduler.load_state_dict(state["scheduler"])
    skipped = state["skipped_steps"] if "skipped_steps" in state else 0
    run.counters = Counters(
        state["step"], state["tokens_seen"], state["flops"], state["wall_seconds"], skipped
    )
    if run.counters.step != checkpoint_step(checkpoint):
        raise UserError(f"{checkpoint / STATE}: holds step {run.counters.step}, not its folder's")
    sched = run.scheduler
    sched.base_lrs = [run.recipe.lr for _ in sched.base_lrs]
    lambdas = sched.lr_lambdas  # type: ignore[attr-defined]
    for group, fn in zip(run.optimizer.param_groups, lambdas, strict=True):
        group["initial_lr"] = run.recipe.lr
        group["lr"] = run.recipe.lr * fn(sched.last_epoch)
    saved = read_metadata(checkpoint)
    layout: dict[str, list[Any]] = {
        "world_size": [saved.world_size, run.ctx.world_size],
        "strategy": [saved.strategy, run.ctx.layout],
    }
    changes = {**changes, **{k: v for k, v in layout.items() if v[0] != v[1]}}
    earlier = saved.resumed
    run.resumed = (
        [*earlier, ResumeRecord(step=run.counters.step, changed=changes)] if changes else earlier
    )
