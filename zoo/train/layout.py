"""A run folder's layout: where its checkpoints are and how one with training state is told.

    runs/x/final/                       the last checkpoint (a plain Hugging Face folder)
    runs/x/checkpoints/step-0000100/    an intermediate one, with `training_state.json`
    runs/x/finetune-causal-1a2b3c4d/    a suite's causal fine-tuning of the run (`hlm run`)

Plain paths and file names, no torch: `hlm runs` lists a runs folder, and `hlm run` looks for
the checkpoints it needs, without loading any model code.
"""

from __future__ import annotations

from pathlib import Path

STATE = "training_state.json"  # the scheduler and counters of a checkpoint that can resume
LEGACY_STATE = "training_state.pt"  # the same, in folders written before it was JSON
# the files whose presence makes a folder hold a run (a fresh run there is refused)
RUN_FILES = ("config.yaml", "final", "checkpoints", "metrics.jsonl")
# what else a run writes in its folder: the resolved settings, the tokenizer, the trackers'
# logs (tensorboard, wandb)
WRITTEN = (*RUN_FILES, "resolved.yaml", "tokenizer", "tensorboard", "wandb")
FINETUNED = "finetune-causal-"  # + the fine-tuning settings' digest: a suite's fine-tuning


def run_written(name: str) -> bool:
    """Whether a run, or a suite's causal fine-tuning of it (with its lock), writes the entry
    `name` of its folder; temporaries a killed writer left (`.tmp-*`) included."""
    return name in WRITTEN or name.startswith((".tmp-", FINETUNED))


def has_state(checkpoint: Path) -> bool:
    """Whether `checkpoint` holds training state (so a run can resume from it)."""
    return (checkpoint / STATE).is_file() or (checkpoint / LEGACY_STATE).is_file()


def list_checkpoints(output_dir: Path) -> list[Path]:
    """Intermediate checkpoints (with training state), oldest first."""
    d = Path(output_dir) / "checkpoints"
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if p.name.startswith("step-") and has_state(p))


def checkpoint_step(path: Path) -> int:
    """The step of an intermediate checkpoint folder `step-0000100`."""
    return int(path.name.removeprefix("step-"))


def run_holding(path: Path) -> Path | None:
    """The run folder that holds `path` (a checkpoint, a tokenizer of a run): the nearest
    folder at or above it that holds a run's files (`RUN_FILES`); None if there is none."""
    for folder in [path, *path.parents]:
        if folder.is_dir() and any((folder / name).exists() for name in RUN_FILES):
            return folder
    return None


def inputs_at_risk(out: Path, inputs: dict[str, str | None]) -> list[str]:
    """`--flag PATH` for each input of `inputs` (flag -> path, None for unset) that lies in
    `out`, holds it, or whose run `out` would write into (`writes_into_run`): what clearing
    or writing `out` would destroy or mix into."""
    target = out.resolve()
    risky = []
    for flag, given in inputs.items():
        if not given:
            continue
        source = Path(given).expanduser().resolve()
        if not source.exists():
            continue
        run = run_holding(source)
        if (
            source.is_relative_to(target)
            or target.is_relative_to(source)
            or (run is not None and writes_into_run(target, run.resolve()))
        ):
            risky.append(f"{flag} {given}")
    return risky


def writes_into_run(target: Path, run: Path) -> bool:
    """Whether output folder `target` lies in run folder `run` where the run's own files are
    (`run/checkpoints/x`, `run/final`): only a fine-tuning's own folder (`FINETUNED`) may lie
    there."""
    if not target.is_relative_to(run):
        return False
    parts = target.relative_to(run).parts
    return not parts or not parts[0].startswith(FINETUNED)
