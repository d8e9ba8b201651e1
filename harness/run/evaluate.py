"""`hlm evaluate`: lm-eval on one checkpoint, ad hoc, like `lm_eval` or `litgpt evaluate`.

    hlm evaluate runs/x/final --tasks hlm_lambada,hlm_boolq --limit 100
    hlm evaluate runs/x/final --tasks hlm_boolq --leaderboard adhoc   # also keep the rows

The evaluation is a one-model, one-task suite built in memory and run through the runner, so
its rows, per-example samples and lm-eval's results JSON are exactly those of an `lm_eval`
cell. It prints lm-eval's own table. With `--leaderboard NAME` the cell is added to
`leaderboards/NAME/` (next to whatever is there, which stays current); without it nothing is
kept but what `--output` asks for.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.logs import verbosity
from harness.results.leaderboard import current_cells, write_current_cells
from harness.run.artifacts import ARTIFACTS
from harness.suite import Suite, SuiteError
from harness.suite.checks import semantic_problems
from zoo.errors import validation_problems


def default_label(checkpoint: str) -> str:
    """A leaderboard label for a checkpoint: its folder's name, the run's for a `final/`."""
    path = Path(checkpoint)
    name = path.parent.name if path.name == "final" and path.parent.name else path.name
    return re.sub(r"[^A-Za-z0-9_.-]", "-", name).lstrip(".-_") or "model"


def adhoc_suite(args: argparse.Namespace, name: str) -> Suite:
    """The suite `hlm evaluate` runs: the checkpoint, one lm_eval task, one seed."""
    params = {
        "tasks": [t for t in args.tasks.split(",") if t],
        "include_path": [str(Path(p).resolve()) for p in args.include_path],
        "limit": args.limit,
        "num_fewshot": args.num_fewshot,
        "batch_size": args.batch_size,
        "device": args.device,
        "dtype": args.dtype,
        "log_samples": args.log_samples,
        "progress": verbosity(args) >= 0,
    }
    data = {
        "name": name,
        "models": [
            {"checkpoint": args.checkpoint, "name": args.model or default_label(args.checkpoint)}
        ],
        "tasks": [
            {"type": "lm_eval", "params": {k: v for k, v in params.items() if v is not None}}
        ],
        "seeds": [args.seed],
        "path": str(Path.cwd() / f"{name}.yaml"),
    }
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(_as_flags(validation_problems(exc, "~"))) from None
    problems = semantic_problems(suite)
    if problems:
        raise SuiteError(_as_flags([p.replace(suite.path, "~", 1) for p in problems]))
    return suite


FLAGS = {
    "models[0].checkpoint": "CHECKPOINT",
    "models[0].name": "--model",
    "name": "--leaderboard",
    "seeds[0]": "--seed",
}


def _as_flags(problems: list[str]) -> list[str]:
    """Problems of the in-memory suite (`~: KEY: message`) named by the flag that set KEY."""
    out = []
    for problem in problems:
        key, _, message = problem.removeprefix("~: ").partition(": ")
        if key.startswith("tasks[0].params."):
            flag = "--" + key.removeprefix("tasks[0].params.").split("[")[0].replace("_", "-")
        else:
            flag = FLAGS[key] if key in FLAGS else key
        out.append(f"{flag}: {message}")
    return out


def _evaluate_into(suite: Suite, out: Path) -> list[dict[str, Any]]:
    """Run the suite's one cell into leaderboard folder `out`; lm-eval's results JSON."""
    from harness.run.cells import expand
    from harness.run.runner import run_cell

    (cell,) = expand(suite)
    out.mkdir(parents=True, exist_ok=True)
    run_cell(cell, out, done=set())
    before = current_cells(out)
    write_current_cells(out, [*(before or []), cell.cell_id])
    kept = sorted(out.glob(f"{ARTIFACTS}/{cell.cell_id}*/lm_eval_results.json"))
    return [json.loads(f.read_text()) for f in kept]


def cmd_evaluate(args: argparse.Namespace) -> int:
    from lm_eval.utils import make_table

    name = args.leaderboard or "evaluate"
    suite = adhoc_suite(args, name)  # the name is checked as a suite's: a safe folder name
    with tempfile.TemporaryDirectory(prefix="hlm-evaluate-") as tmp:
        out = Path(args.leaderboards) / name if args.leaderboard else Path(tmp) / name
        results = _evaluate_into(suite, out)
        for r in results:
            print(make_table(r))
        if args.output:
            dest = Path(args.output)
            dest.mkdir(parents=True, exist_ok=True)
            for f in (out / ARTIFACTS).rglob("lm_eval_*"):
                shutil.copy2(f, dest / f.name)
            print(f"lm-eval's results: {dest}")
    if args.leaderboard:
        print(f"rows added to {out} (hlm leaderboard {name})")
    return 0
