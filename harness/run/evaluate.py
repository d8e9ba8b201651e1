"""`hlm evaluate`: lm-eval on one checkpoint, ad hoc, with lm_eval's own flags and files.

    hlm evaluate runs/x/final --tasks hlm_lambada,hlm_boolq --limit 100
    hlm evaluate --model hf --model_args pretrained=runs/x/final,dtype=float32 \
        --tasks hlm_lambada --output_path out --log_samples        # an lm_eval command line
    hlm evaluate runs/x/final --tasks hlm_boolq --leaderboard adhoc   # also keep the rows

The flags are lm-eval's, under its names and meanings (`--model_args`, `--num_fewshot`,
`--batch_size auto`, `--limit 0.1`, `--include_path`, `--output_path`, `--log_samples`; the
dashed spellings work too), and `--output_path` writes lm-eval's own results file and samples
(through its EvaluationTracker), so tools that read lm-eval's output read ours. The evaluation
is a one-model, one-task suite built in memory and run through the runner, so its rows and
per-example samples are exactly those of an `lm_eval` cell. It prints lm-eval's own table.
With `--leaderboard NAME` the cell is added to `leaderboards/NAME/` (next to whatever is
there, which stays current); without it nothing is kept but what `--output_path` asks for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.results.leaderboard import current_cells, write_current_cells
from harness.run.artifacts import ARTIFACTS
from harness.suite import Suite, SuiteError
from harness.suite.checks import semantic_problems
from zoo.checkpoint_files import check_tokenizer_fits, check_weights
from zoo.data.corpus import DATA_ROOT_ENV, data_root
from zoo.errors import UserError, validation_problems
from zoo.reader import read_json
from zoo.registry import trusting
from zoo.train.names import resolve_checkpoint
from zoo.writer import refuse_among_inputs


def default_label(checkpoint: str, given: str | None = None) -> str:
    """A leaderboard label for a checkpoint: the run's name it was given by
    (`suite/model/seed-0` as `suite-model-seed-0`), else its folder's name, the run's for a
    `final/` (a cached run's folder is its key: a name says more than a hash)."""
    if given is not None and not Path(given).exists():
        name = given
    else:
        path = Path(checkpoint)
        name = path.parent.name if path.name == "final" and path.parent.name else path.name
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name).lstrip(".-_") or "model"


@dataclass(frozen=True)
class EvaluateRequest:
    """`hlm evaluate`'s command line as read (`harness.cli.evaluate`): lm-eval's flags under
    their names and meanings, `model_args` already split into checked keys."""

    checkpoint: str | None
    tasks: list[str]
    model: str
    model_args: dict[str, str]
    limit: str | None
    num_fewshot: int | None
    batch_size: str
    include_path: list[str]
    output_path: str | None
    log_samples: bool
    device: str | None
    dtype: str | None
    seed: list[int | None]
    label: str | None
    leaderboard: str | None
    progress: bool
    # lm-eval's other settings (gen_kwargs, apply_chat_template, metadata...), as the task's
    # params name them; one not given is None
    lm_eval_settings: dict[str, Any] = field(default_factory=dict)


def _checkpoint(req: EvaluateRequest) -> str:
    if req.model not in ("hf", "hf-auto"):
        raise SuiteError([f"--model: hlm evaluate runs lm-eval's hf model, not {req.model!r}"])
    pretrained = req.model_args["pretrained"] if "pretrained" in req.model_args else None
    given = [c for c in (req.checkpoint, pretrained) if c]
    if not given:
        raise SuiteError(["CHECKPOINT: give it, or --model_args pretrained=PATH"])
    if len(set(given)) > 1:
        raise SuiteError([f"CHECKPOINT: {given[0]} and --model_args pretrained={given[1]} differ"])
    path = resolve_checkpoint(_at_revision(given[0], req.model_args.get("revision")))
    if Path(path).is_dir():  # a folder someone may have sent: weights that read, all finite,
        check_tokenizer_fits(Path(path))  # and a tokenizer of this model
        check_weights(Path(path))
    return path


STEP_REVISION = re.compile(r"^step-?(\d+)$")  # Pythia's `step1000`, or hlm's `step-1000`


def _at_revision(given: str, revision: str | None) -> str:
    """`--model_args revision=` on a local run: its checkpoint at that step (Pythia's
    `revision=step1000` names a step the same way); a Hub id keeps its revision for lm-eval.
    A revision a local folder cannot have is an error."""
    if revision is None:
        return given
    step = STEP_REVISION.match(revision)
    folder = Path(given)
    if folder.is_dir():
        run = folder.parent if folder.name == "final" else folder
        if step is None or not (run / "checkpoints").is_dir():
            raise SuiteError(
                [f"--model_args: revision={revision}: {given} is a local folder, which has no "
                 "revisions; name a step of a run's checkpoints (revision=step-N)"]
            )  # fmt: skip
        return str(run / "checkpoints" / f"step-{int(step[1]):07d}")
    if resolve_checkpoint(given) == given:  # a Hub id: lm-eval loads it at that revision
        return given
    if step is None:
        raise SuiteError([f"--model_args: revision={revision}: run {given} has steps, no "
                          "revisions (revision=step-N)"])  # fmt: skip
    return f"{given}@step-{int(step[1])}"


def _limit(text: str | None) -> float | int | None:
    """lm-eval's --limit: an integer count, or a fraction below 1."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise SuiteError([f"--limit: {text!r} is neither a count nor a fraction"]) from None


def _output_path(given: str | None, checkpoint: str) -> str | None:
    """lm-eval's --output_path, resolved: a folder, or a `.json` path whose folder lm-eval
    writes into (as lm-eval reads it); a file or a device where that folder goes is refused
    (lm-eval would log a warning, write nothing and exit 0), and so is a folder inside the
    checkpoint evaluated, or holding it (its results would land among its weights)."""
    if given is None:
        return None
    path = Path(given).expanduser().resolve()
    folder = path.parent if path.suffix == ".json" else path
    if Path(checkpoint).is_dir():
        try:
            refuse_among_inputs(folder, {"the checkpoint": Path(checkpoint)}, "--output_path")
        except UserError as exc:
            raise SuiteError([str(exc)]) from None
    if folder.exists() and not folder.is_dir():
        raise SuiteError(
            [
                f"--output_path: {folder} exists and is not a folder; lm-eval writes its results "
                "into a folder (FOLDER, or FOLDER/name.json)"
            ]
        )
    return str(path)


def results_written(output_path: str, since: float) -> list[Path]:
    """The results files lm-eval wrote under `output_path` since `since` (a time stamp)."""
    path = Path(output_path)
    folder = path.parent if path.suffix == ".json" else path
    found = [f for f in folder.glob("*/results_*.json") if f.stat().st_mtime >= since]
    return sorted(found)


def _max_length(margs: dict[str, str]) -> int | None:
    """`--model_args max_length=N` as a number (the task's params check its range)."""
    if "max_length" not in margs:
        return None
    if not margs["max_length"].isdigit():
        raise SuiteError([f"--model_args: max_length={margs['max_length']!r} is not an integer"])
    return int(margs["max_length"])


def _batch_size(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def adhoc_suite(req: EvaluateRequest, name: str) -> Suite:
    """The suite `hlm evaluate` runs: the checkpoint, one lm_eval task, one seed."""
    checkpoint = _checkpoint(req)
    margs = req.model_args
    named = req.checkpoint or (margs["pretrained"] if "pretrained" in margs else None)
    params = {
        "tasks": [t for arg in req.tasks for t in arg.split(",") if t],
        "include_path": [str(Path(p).resolve()) for p in req.include_path],
        "limit": _limit(req.limit),
        "num_fewshot": req.num_fewshot,
        "batch_size": _batch_size(req.batch_size),
        "device": req.device or (margs["device"] if "device" in margs else None),
        "dtype": req.dtype or (margs["dtype"] if "dtype" in margs else None),
        "log_samples": req.log_samples,
        "output_path": _output_path(req.output_path, checkpoint),
        "progress": req.progress,
        "seeds": req.seed,
        # a Hub id's revision goes to lm-eval; a local run's named the step folder above
        "revision": None if Path(checkpoint).is_dir() else margs.get("revision"),
        "max_length": _max_length(margs),
        **{k: v for k, v in req.lm_eval_settings.items() if v is not None},
    }
    data = {
        "name": name,
        "models": [
            {"checkpoint": checkpoint, "name": req.label or default_label(checkpoint, named)}
        ],
        "tasks": [
            {"type": "lm_eval", "params": {k: v for k, v in params.items() if v is not None}}
        ],
        "seeds": [req.seed[0] or 0],  # the row's seed: lm-eval's first
        "path": str(Path.cwd() / f"{name}.yaml"),
    }
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(_as_flags(validation_problems(exc, "~"))) from None
    with trusting():  # its task folders were named on the command line: the user's choice
        problems = semantic_problems(suite)
    if problems:
        raise SuiteError(_as_flags([p.replace(suite.path, "~", 1) for p in problems]))
    return suite


FLAGS = {
    "models[0].checkpoint": "CHECKPOINT",
    "models[0].name": "--label",
    "name": "--leaderboard",
    "seeds[0]": "--seed",
}


def _as_flags(problems: list[str]) -> list[str]:
    """Problems of the in-memory suite (`~: KEY: message`) named by the flag that set KEY."""
    out = []
    for problem in problems:
        key, _, message = problem.removeprefix("~: ").partition(": ")
        if key.startswith("tasks[0].params."):
            param = key.removeprefix("tasks[0].params.").split("[")[0]  # lm-eval's names
            flag = "--seed" if param == "seeds" else f"--{param}"
        else:
            flag = FLAGS[key] if key in FLAGS else key
        out.append(f"{flag}: {message}")
    return out


def evaluate_into(suite: Suite, out: Path) -> list[dict[str, Any]]:
    """Run the suite's one cell into leaderboard folder `out`; lm-eval's results JSON."""
    from harness.run.cells import expand, missing_data
    from harness.run.runner import run_cell

    (cell,) = expand(suite)
    if missing := missing_data([cell]):  # before lm-eval loads the model
        gone = ", ".join(name for names in missing.values() for name in names)
        raise UserError(f"--tasks: {gone} not found ({DATA_ROOT_ENV}={data_root()})")
    out.mkdir(parents=True, exist_ok=True)
    run_cell(cell, out, done=set(), redo=True)  # an ad hoc evaluation: always anew
    before = current_cells(out)
    write_current_cells(out, [*(before or []), cell.cell_id])
    kept = sorted(out.glob(f"{ARTIFACTS}/{cell.cell_id}*/lm_eval_results.json"))
    return [read_json(f, "lm-eval's results") for f in kept]
