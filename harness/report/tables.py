"""Leaderboard tables that fit a terminal: one table per task, metric names as columns.

    print(tables(aggregate(df), width=120))

Each task gets its own markdown table (quality tasks first, throughput last) with the models
as rows and the task's metrics as short column names. A table wider than `width` is turned
(metrics as rows, models as columns); one still too wide is cut into column groups that fit.
`--sort TASK/METRIC` orders the rows of that task's table; the others follow their first
metric's direction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd
from tabulate import tabulate

from harness.results.fields import SweepPoint
from harness.results.leaderboard import unfinished
from harness.results.metrics import direction
from zoo.registry import check_name
from zoo.text import md_cell

WIDTH = 120


def _cell(r: Mapping[Any, Any]) -> str:
    """mean ± std over seeds; † better, ‡ worse than the baseline (`compare_to_baseline`)."""
    mean, std = float(r["mean"]), float(r["std"])
    digits = 4 if abs(mean) < 10 else 1
    s = f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if int(r["n"]) > 1 else "")
    better, worse = bool(r.get("significant", False)), bool(r.get("worse", False))
    return s + (" †" if better else " ‡" if worse else "")


def _labelled(agg: pd.DataFrame) -> pd.DataFrame:
    """`agg` with the table's `row` (model, sweep point) and `column` (task/metric) labels."""
    a = agg.copy()
    a["row"] = [row_label(m, s) for m, s in zip(a["model"], a["sweep"], strict=True)]
    a["column"] = [f"{t}/{m}" for t, m in zip(a["task"], a["metric"], strict=True)]
    return a


def pivot_means(agg: pd.DataFrame) -> pd.DataFrame:
    """The mean behind each cell of `pivot` (same row and column labels, unsorted)."""
    a = _labelled(agg)
    return a.pivot_table(index="row", columns="column", values="mean", aggfunc="first", sort=False)


def pivot(agg: pd.DataFrame, sort_by: str | None = None) -> pd.DataFrame:
    """Models (x sweep point) as rows, task/metric as columns, sorted by `sort_by`'s direction."""
    if agg.empty:
        return pd.DataFrame()
    a = _labelled(agg)
    a["cell"] = [_cell(r) for r in a.to_dict("records")]
    table = a.pivot_table(index="row", columns="column", values="cell", aggfunc="first", sort=False)
    means = pivot_means(agg)
    if sort_by is not None:
        check_name("--sort column", sort_by, sorted(means.columns))
    key = sort_by if sort_by is not None else (means.columns[0] if len(means.columns) else None)
    if key is not None:
        metric = key.split("/")[-1]
        hib = direction(metric)
        order = (
            means[key]
            .sort_values(ascending=not hib if hib is not None else True, na_position="last")
            .index
        )
        table = table.loc[order]
    # quality first, cost last: columns by task (throughput at the end), then metric
    columns = sorted(table.columns, key=lambda c: (c.startswith("throughput/"), c))
    table = table[columns]
    table.index.name = "model"
    return table.fillna("")


def row_label(model: str, sweep_json: str | None) -> str:
    """A table row's label: the model, and its sweep point when it has one."""
    point = SweepPoint.of(sweep_json).label()
    return f"{model} {point}" if point else model


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _markdown(table: pd.DataFrame) -> str:
    """GitHub Markdown of `table`, its labels and text cells escaped (`md_cell`): a model or
    task name from the rows stays one cell of text, never a column break or raw HTML."""
    safe = table.rename(index=md_cell, columns=md_cell)
    safe = safe.map(lambda v: md_cell(v) if isinstance(v, str) else v)
    safe.index.name = table.index.name
    return tabulate(safe, headers="keys", tablefmt="github")  # type: ignore[arg-type]


def _chunks(table: pd.DataFrame, width: int) -> list[pd.DataFrame]:
    """`table` cut into groups of columns (the index kept in each) that fit `width`."""
    groups: list[list[str]] = [[]]
    for column in table.columns:
        trial = table[[*groups[-1], column]]
        if groups[-1] and _width(_markdown(trial)) > width:
            groups.append([column])
        else:
            groups[-1].append(column)
    return [table[g] for g in groups]


def fitted(table: pd.DataFrame, width: int = WIDTH) -> str:
    """The markdown of `table`, turned or cut so that no line is wider than `width` where
    the cells themselves allow it."""
    text = _markdown(table)
    if _width(text) <= width:
        return text
    turned = table.T
    turned.index.name = "metric"
    if _width(_markdown(turned)) <= width:
        return _markdown(turned)
    cuts = [[_markdown(part) for part in _chunks(t, width)] for t in (turned, table)]
    # the fewest parts that fit; else the narrowest
    best = min(
        cuts,
        key=lambda parts: (max(map(_width, parts)) > width, len(parts), max(map(_width, parts))),
    )
    return "\n\n".join(best)


def tables(agg: pd.DataFrame, sort_by: str | None = None, width: int = WIDTH) -> str:
    """One fitted table per task of the aggregated leaderboard `agg`."""
    if agg.empty:
        return "(no results yet)"
    columns = sorted({f"{t}/{m}" for t, m in zip(agg["task"], agg["metric"], strict=True)})
    if sort_by is not None:
        check_name("--sort column", sort_by, columns)
    tasks = sorted(set(agg["task"]), key=lambda t: (t.startswith("throughput"), t))
    out = []
    for task in tasks:
        key = sort_by if sort_by is not None and sort_by.startswith(f"{task}/") else None
        table = pivot(agg[agg["task"] == task], key)
        table.columns = [c.removeprefix(f"{task}/") for c in table.columns]
        out.append(f"{md_cell(task)}\n\n{fitted(table, width)}")
    return "\n\n".join(out)


def render(agg: pd.DataFrame, fmt: str, sort_by: str | None = None, width: int = WIDTH) -> str:
    """md: the per-task tables; csv / json: the aggregated long table."""
    if fmt == "md":
        return tables(agg, sort_by, width)
    long = agg.drop(columns=["values"])
    if fmt == "csv":  # a mapping or list cell as JSON, which any reader parses; not a repr
        return str(long.map(_as_json).to_csv(index=False))
    if fmt == "json":
        return str(long.to_json(orient="records", indent=2))
    raise ValueError(f"unknown format {fmt!r}")


def _as_json(value: Any) -> Any:
    """A dict or list cell as JSON (string keys), any other value as it is."""
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str)
    return value


def select_task(tasks: Any, name: str) -> Any:
    """Rows of task `name` or of its sub-tasks (`lm_eval` selects `lm_eval/hlm_lambada`...);
    an unknown name gets the close-match error."""
    known = sorted(set(tasks))
    families = sorted({t.split("/", 1)[0] for t in known})
    if name in known:
        return tasks == name
    check_name("task", name, sorted({*known, *families}))
    return tasks.str.startswith(name + "/")


def not_shown(df: pd.DataFrame) -> list[str]:
    """One line per cell cut off before its final checkpoint (`unfinished`), which the
    tables of final-checkpoint rows leave out: its model, seed, task and steps so far."""
    cells = {(m, sw, s, t): steps for (m, sw, s, t, _), steps in unfinished(df).items()}
    return [
        f"not shown: {row_label(m, sw)} seed {s} {t} (steps {', '.join(map(str, steps))} only; "
        "its final checkpoint is not evaluated yet: `hlm run` finishes it)"
        for (m, sw, s, t), steps in sorted(cells.items())
    ]
