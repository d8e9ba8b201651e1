"""A leaderboard as a reader sees it: the rows a table shows, marked on the whole board, and
the notes beneath it. `hlm leaderboard` prints it; a published leaderboard's card holds it.

    agg, notes = leaderboard_view(df, "bert-tiny-ce", samples, task="glue")
    print(render(agg, "md")); print("\n".join(notes))

The marks (†, ‡: `harness.results.significance`) are computed on every row first, so what a
view selects (a task, the readable columns) changes none of them.
"""

from __future__ import annotations

import pandas as pd
from pydantic import ValidationError

from harness.report.tables import not_shown, select_task
from harness.results.fields import cell_config
from harness.results.leaderboard import aggregate
from harness.results.metrics import METRICS, is_baseline, metric_info
from harness.results.significance import best_epoch, compare_to_baseline, family_size
from zoo.errors import UserError


def leaderboard_view(
    df: pd.DataFrame,
    baseline: str | None,
    samples: pd.DataFrame,
    task: str | None = None,
    readable: bool = True,
) -> tuple[pd.DataFrame, list[str]]:
    """The aggregated rows of leaderboard rows `df` to show (those of `task`; with
    `readable`, no informational metric but the trivial models' and no best-epoch pick), with
    their marks against `baseline` (computed on all of `df`), and the notes to print under
    the table: what the marks mean, what a trivial model's column is, the cells not shown."""
    agg = aggregate(df)
    if baseline is not None:  # on every row: the view changes no mark
        agg = compare_to_baseline(agg, baseline, samples)
    family = family_size(agg) if baseline is not None else 0
    if task:
        agg = agg[select_task(agg["task"], task)]
        df = df[select_task(df["task"], task)]
    if readable:
        shown = agg["higher_is_better"].notna() | agg["metric"].map(is_baseline)
        agg = agg[shown & ~agg["metric"].map(best_epoch)]
    notes = [footnote(agg, baseline, family)] if baseline is not None else []
    if trivial := trivial_columns(agg):
        notes.append(trivial)
    return agg, notes + partial_rows(df) + not_shown(df)  # rows at a budget: none listed


def footnote(agg: pd.DataFrame, baseline: str, family: int) -> str:
    """What † and ‡ mean in this table: the tests that made its marks, corrected together
    with the leaderboard's `family` of comparisons."""
    marked = [b or w for b, w in zip(agg["significant"], agg["worse"], strict=True)]
    tests = sorted({t for t, m in zip(agg["test"], marked, strict=True) if m and t})
    how = "; ".join(tests) if tests else "none significant"
    unit = "the pretraining seed is the unit"
    if any(metric_info(m).replicate != "seeds" for m in agg["metric"]):
        unit += " (a speed or memory cell pretrains nothing: its seed's value is one measurement)"
    return (
        f"† better, ‡ worse than the baseline `{baseline}` at Holm-adjusted p < 0.05 over "
        f"the leaderboard's {family} comparisons, every task's whichever are shown (two-sided; "
        f"{unit}; tests: {how}; no mark: inconclusive, not equal; a "
        "best-epoch column is not tested: its epoch is chosen on the set it is scored on); "
        "values are mean ± std over seeds at the final checkpoint. A metric comparable only "
        "within one objective (a loss over in-batch negatives) is not compared across objectives."
    )


def trivial_columns(agg: pd.DataFrame) -> str:
    """What each trivial model's column in the table is (`majority`, `unigram_ppl`): a bar
    beside the models' scores, never compared; "" where the table has none."""
    shown = sorted({m for m in agg["metric"] if is_baseline(m)})
    said = "; ".join(f"{m}: {METRICS.get(m).description}" for m in shown)
    return f"A trivial model's score, beside the models' and not compared: {said}." if said else ""


def partial_rows(df: pd.DataFrame) -> list[str]:
    """A note naming the rows that scored part of their task's examples (`TaskType.partial`:
    lm-eval's `--limit`), so that a quick run is never read as a full one; [] for none."""
    from harness.tasks import TASKS

    said = set()
    for model, config in df[["model", "config"]].drop_duplicates().itertuples(index=False):
        try:
            task = cell_config(config).task
        except (UserError, TypeError):
            continue
        if task is None or task.type not in TASKS:
            continue
        spec = TASKS.get(task.type)
        try:
            text = spec.partial(spec.params.model_validate(task.params))
        except ValidationError:
            continue
        if text:
            said.add(f"{model} on {task.entry} ({text})")
    if not said:
        return []
    return ["partial (not every example scored): " + "; ".join(sorted(said))]
