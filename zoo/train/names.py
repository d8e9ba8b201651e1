"""Runs by name: `suite/model/seed-N` instead of a configuration hash.

    link_run("paper-cpu-encoder/bert-tiny-cwt/seed-1", runs_dir() / "pretrain" / key)
    resolve_checkpoint("paper-cpu-encoder/bert-tiny-cwt/seed-1")            # .../final
    resolve_checkpoint("paper-cpu-encoder/bert-tiny-cwt/seed-1@step-2000")  # .../step-0002000

Runs and leaderboards live under `hlm_home()`: $HLM_HOME, else the current project.
A suite's runs are cached by the hash of what defines their weights (`runs/pretrain/<key>/`),
so that suites share them. Each run a suite uses is also linked under its readable name in
`runs/by-name/` (a relative symbolic link: `ls runs/by-name/<suite>` browses them, and the link
moves with the folder). A causally fine-tuned decoder's name is its fine-tuning's; the headless
run it starts from is `suite/model/pretraining/seed-N`. Every command that takes a checkpoint
folder takes such a name, with `@step-N` for a checkpoint along the run; a path that exists,
or a Hub id, is taken as given.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from zoo.errors import UserError, did_you_mean

HOME_ENV = "HLM_HOME"  # the folder that holds leaderboards/ and runs/ (and a user's suites/)
HOME_MARKS = ("leaderboards", "suites")  # a folder holding one is a project in use
RUNS_ENV = "HLM_RUNS_DIR"
BY_NAME = "by-name"
STEP = re.compile(r"^(?P<name>[^@]+)@(?:step-(?P<step>\d+)|final)$")
SEED = re.compile(r"/seed-\d+$")  # the end of a run's name
PRETRAINING = "pretraining"  # a fine-tuned model's pretraining: suite/model/pretraining/seed-N


def hlm_home() -> Path:
    """Where `leaderboards/` and `runs/` live, and a user's `suites/` are found: $HLM_HOME,
    else the current project (the working folder, or the nearest folder above it, that
    holds `leaderboards/` or `suites/`, as git finds its repository), else the working
    folder. Relative (`.`) where it is the working folder."""
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser()
    here = Path.cwd()
    for folder in (here, *here.parents):
        if any((folder / mark).is_dir() for mark in HOME_MARKS):
            return Path(".") if folder == here else folder
    return Path(".")


def runs_dir() -> Path:
    """Where pretraining runs are cached: $HLM_RUNS_DIR, default `runs/` under `hlm_home()`."""
    return Path(os.environ[RUNS_ENV]) if RUNS_ENV in os.environ else hlm_home() / "runs"


def run_name(suite: str, label: str, seed: int, sweep: dict[str, object]) -> str:
    """`suite/model/seed-N`, with the sweep point between model and seed where there is one."""
    point = ",".join(f"{k}={v}" for k, v in sorted(sweep.items()))
    safe = re.sub(r"[^A-Za-z0-9_.=,+-]", "-", point)
    return "/".join([suite, label, *([safe] if safe else []), f"seed-{seed}"])


def link_run(name: str, target: Path, runs: Path | None = None) -> Path:
    """Link `runs/by-name/<name>` to the run folder `target` (replacing an older link of that
    name atomically); the link's path."""
    link = (runs or runs_dir()) / BY_NAME / name
    link.parent.mkdir(parents=True, exist_ok=True)
    relative = os.path.relpath(target.resolve(), link.parent.resolve())
    if link.is_symlink() and os.readlink(link) == relative:
        return link
    tmp = link.with_name(f".{link.name}.tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(relative, target_is_directory=True)
    os.replace(tmp, link)
    return link


def named_runs(runs: Path | None = None) -> dict[str, Path]:
    """Every run name under `runs/by-name/` and the folder it links to, sorted by name."""
    root = (runs or runs_dir()) / BY_NAME
    if not root.is_dir():
        return {}
    links = (p for p in root.rglob("seed-*") if p.is_symlink())
    return {str(p.relative_to(root)): p.resolve() for p in sorted(links)}


def resolve_checkpoint(text: str, runs: Path | None = None) -> str:
    """A checkpoint folder for `text`: a path that exists as given; a run name (`@step-N` for
    a checkpoint along it, `@final` or nothing for its end) as its folder; anything else (a
    Hub id) unchanged. A run's name (ending in `/seed-N`) with no such run, or whose
    checkpoint is missing, is a clear error."""
    if Path(text).exists():
        return text
    match = STEP.match(text)
    name = match["name"] if match else text
    named = (runs or runs_dir()) / BY_NAME
    link = named / name
    if not link.is_symlink():
        if SEED.search(name):  # a run's name, and no such run: not a Hub id
            hint = did_you_mean(name, list(named_runs(runs)))
            raise UserError(
                f"{text}: no such folder, nor a run of that name in {named}{hint} "
                "(`hlm runs` lists them)"
            )
        return text
    run = link.resolve()
    step = match["step"] if match else None
    folder = run / "final" if step is None else run / "checkpoints" / f"step-{int(step):07d}"
    if not folder.is_dir():
        kept = sorted(p.name for p in (run / "checkpoints").glob("step-*"))
        raise UserError(
            f"{text}: run {name} ({run}) has no {folder.relative_to(run)} "
            "(it has: "
            f"{', '.join([*kept, *(['final'] if (run / 'final').is_dir() else [])]) or 'none'})"
        )
    return str(folder)
