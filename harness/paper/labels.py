"""What we ran, in words, for one model of a paper figure: its run label (steps, tokens,
causal fine-tuning) and its evaluation protocol (the task type's `describe` over the params
its cells recorded), read from the rows themselves, so that a label says what ran.

Each reads a row's cell configuration through `harness.results.fields.cell_config`; a part
that does not read is an error naming the model, never a label that silently drops it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pandas as pd
from pydantic import ValidationError

from harness.paper.sources import Source, rows_of
from harness.results.fields import cell_config
from harness.results.leaderboard import final_rows
from harness.tasks import TASKS
from zoo.errors import UserError
from zoo.train.finetune_settings import CausalFinetuneConfig


def at_steps(rows: pd.DataFrame, model: str, source: Source) -> pd.DataFrame:
    """`model`'s rows of `source`'s task and metric, the latest of each (seed, step, point)."""
    d = rows_of(rows, model, source.task, source.metric)
    return d.sort_values("timestamp").drop_duplicates(["seed", "step", "sweep"], keep="last")


def run_label(rows: pd.DataFrame, model: str, source: Source) -> str:
    """What we ran for `model`: its last checkpoint's step and tokens (over its seeds)."""
    d = final_rows(at_steps(rows, model, source))
    if d.empty or d["step"].isna().all():
        return model
    step, tokens = int(d["step"].max()), d["tokens_seen"].max()
    seen = "" if pd.isna(tokens) else f", {float(tokens) / 1e6:.1f}M tokens"
    configs = set(d["config"].dropna())  # one per cell, read once
    ft = sorted({n for c in configs if (n := _causal_finetune_steps(c, model))})
    tuned = f", then {'/'.join(map(str, ft))} causal fine-tuning steps" if ft else ""
    return f"{model} ({step} steps{seen}{tuned})"


def _causal_finetune_steps(config: str, model: str) -> int | None:
    """The causal fine-tuning steps a row's cell configuration ran, None without. A
    configuration that does not read is an error naming the model: a label that silently
    dropped the fine-tuning would say the model ran less than it did."""
    try:
        cell = cell_config(config)
    except UserError as err:
        raise ValueError(f"{model}: {err}") from err
    if not cell.finetune_causal:
        return None
    return cell.finetune.steps or CausalFinetuneConfig.model_fields["steps"].default


def protocol(rows: pd.DataFrame, model: str, source: Source) -> str:
    """How `model`'s rows of `source` were evaluated, in words (its task type's `describe`
    over the params its cells recorded); "" for a task type without one. Cells that ran
    differently are each described, joined by " / "."""
    d = final_rows(at_steps(rows, model, source))
    said = sorted({text for c in set(d["config"].dropna()) if (text := _described(c, model))})
    return " / ".join(said)


def _described(config: str, model: str) -> str:
    try:
        task = cell_config(config).task
        if task is None:
            return ""
        spec = TASKS.get(task.type)
        return spec.describe(spec.params.model_validate(task.params))
    except UserError as err:
        raise ValueError(f"{model}: {err}") from err
    except ValidationError as err:
        raise ValueError(
            f"{model}: a row's task params do not read: {err.errors()[0]['loc']} "
            f"{err.errors()[0]['msg']}"
        ) from err


def machine_counts(rows: pd.DataFrame) -> dict[str, int]:
    """How many rows record each machine they were computed on ('' for rows that record
    none: rows written before the leaderboard kept a `hardware` column)."""
    if rows.empty:
        return {}
    counts = rows["hardware"].fillna("").astype(str).value_counts()
    return {str(machine): int(n) for machine, n in counts.items()}


def run_on(*counts: Mapping[str, int]) -> str:
    """Where the rows counted (one `machine_counts` per suite) were run, as they record it:
    the machine that trained a row's checkpoint, or that ran a cell without one (a speed
    measured side by side). Where some record no machine, each machine's share of the rows
    and the rest's count are given, so that a machine is never said of rows that do not name
    it; "" for no rows."""
    total: Counter[str] = Counter()
    for c in counts:
        total.update(c)
    named = sorted(m for m in total if m)
    if not total[""]:
        return f"run on {', '.join(named)}" if named else ""
    n = sum(total.values())
    if not named:
        return f"none of the {n} rows records its machine"
    shares = ", ".join(f"{m} ({total[m]} of {n} rows)" for m in named)
    return f"run on {shares}; the other {total['']} rows record no machine"
