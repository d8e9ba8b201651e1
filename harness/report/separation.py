"""Where pretraining shows: for each pretrained model and instrument, the gap to its untrained
twin (same preset, no steps) at every checkpoint along pretraining, and the first checkpoint
where that gap clears the instrument's gate margin (the cpu-ladder's question).

The seed is the unit: at each checkpoint, each seed's value minus the twin's mean over its
seeds, as a gate compares a model with its twin (`harness.paper.sources.Check`), then the
mean gap over seeds with its 95 % t interval (the twin's mean held fixed, as the gate holds
it). A checkpoint separates where every seed's gap clears the margin: the one-seed rule,
held by each seed. It is a rule for planning (where to run a test), not a test: a ladder's two
seeds give a t interval of about 9 standard deviations each way, which clears nothing, so
the interval is shown and the test is left to a pre-registered run of more seeds. The
margins are the gates' own (`TaskType.gates`: SST-2 probe 0.02, fine-tuned SST-2 0.05, MRPC
F1 0.02, BLiMP 0.02); STS-B is drawn as a comparison and never separates, as its gates have
no bar against the twin.

The operating point (`operating_point`) is the cheapest checkpoint, by CPU-hours, where a CE
model clears two gated instruments and stays clear at every later checkpoint. A later
checkpoint that a running seed has not reached yet neither separates nor breaks "stays";
one where a seed that reached it falls under the margin breaks it, whatever the others do.

    hlm leaderboard cpu-ladder --separation     # the table and the operating point
    hlm plot cpu-ladder                          # and separation-<instrument> figures
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt

from harness.report.figures import figure_path, palette, save
from harness.results.budgets import untrained
from harness.results.fields import cell_config
from harness.results.stats import differences, magnitude
from harness.tasks import TASKS


@dataclass(frozen=True)
class Instrument:
    """One instrument: the rows it reads and the gate whose margin says "separated"
    (`gate`: task type and key in its `gates`; None: a comparison, no bar)."""

    name: str
    task: str
    metric: str
    gate: tuple[str, str] | None

    def margin(self) -> float | None:
        if self.gate is None:
            return None
        kind, key = self.gate
        gate = TASKS.get(kind).gates[key]
        return gate.margin if gate.twin else None


INSTRUMENTS = (
    Instrument("SST-2 probe", "probe/sst2/mean", "accuracy", ("probe", "sst2")),
    Instrument("fine-tuned SST-2", "glue/sst2", "accuracy", ("glue", "sst2")),
    Instrument("fine-tuned MRPC", "glue/mrpc", "f1", ("glue", "mrpc")),
    Instrument("BLiMP", "blimp", "accuracy", ("blimp", "blimp")),
    Instrument("STS-B probe (comparison)", "probe/stsb/mean-cosine", "pearson", None),
    Instrument(
        "SST-2 probe, held-out train (comparison)", "probe/sst2-heldout/mean", "accuracy", None
    ),
    Instrument("fine-tuned STS-B (comparison)", "glue/stsb", "pearson", None),
)


def twins(df: pd.DataFrame) -> dict[str, str]:
    """Each pretrained model's untrained twin: the model of the same preset whose rows are
    all at step 0."""
    controls = {str(df.loc[df["model"] == m, "preset"].iloc[0]): m for m in untrained(df)}
    presets = df.drop_duplicates("model").set_index("model")["preset"]
    return {
        str(m): controls[str(p)]
        for m, p in presets.items()
        if str(p) in controls and controls[str(p)] != m
    }


def seed_gaps(df: pd.DataFrame, instrument: Instrument) -> pd.DataFrame:
    """Per pretrained model, seed and checkpoint: tokens seen, CPU-hours, and the seed's gap
    to its twin's mean over seeds. Not to the twin of the same seed: a trained model's score
    owes little to the weights it started from, so pairing would add the twins' spread to
    every gap (the ladder's two twins differ by 0.045 on the SST-2 probe)."""
    d = df[(df["task"] == instrument.task) & (df["metric"] == instrument.metric)]
    out = []
    for model, twin in twins(df).items():
        base = d[d["model"] == twin].groupby("seed")["value"].mean()
        mine = d[d["model"] == model]
        if base.empty or mine.empty:
            continue
        for _, at in mine.groupby(["seed", "step"]):
            out.append(
                {
                    "model": model,
                    "seed": int(at["seed"].iloc[0]),
                    "step": int(at["step"].iloc[0]),
                    "tokens": float(at["tokens_seen"].max()),
                    "cpu_hours": float(at["train_seconds"].max()) / 3600,
                    "value": float(at["value"].mean()),
                    "gap": float(at["value"].mean()) - float(base.mean()),
                }
            )
    return pd.DataFrame(out)


def gaps(df: pd.DataFrame, instrument: Instrument) -> pd.DataFrame:
    """Per pretrained model and checkpoint: tokens seen, CPU-hours, the mean gap to the twin
    over seeds with its 95 % interval, the least and greatest seed's gaps, the seeds behind
    it, and the seeds the model has at any checkpoint (`runs`)."""
    per_seed = seed_gaps(df, instrument)
    if per_seed.empty:
        return pd.DataFrame()
    per_seed["runs"] = per_seed.groupby("model")["seed"].transform("nunique")
    out = []
    for _, at in per_seed.groupby(["model", "step"]):
        c = differences(at["gap"].to_numpy(), "seeds", magnitude(at["value"]))
        out.append(
            {
                "model": str(at["model"].iloc[0]),
                "step": int(at["step"].iloc[0]),
                "tokens": float(at["tokens"].max()),
                "cpu_hours": float(at["cpu_hours"].max()),
                "gap": c.delta,
                "low": c.low,
                "high": c.high,
                "least": float(at["gap"].min()),
                "most": float(at["gap"].max()),
                "seeds": len(at),
                "runs": int(at["runs"].iloc[0]),  # the model's seeds: some may not be here yet
            }
        )
    return pd.DataFrame(out)


def _each_seed(per_seed: pd.DataFrame, margin: float) -> str:
    """Where each seed's gap first clears `margin`, in M tokens, seed by seed."""
    said = []
    for seed, g in per_seed.sort_values("step").groupby("seed"):
        over = g[g["gap"] > margin]
        said.append(f"{seed}: " + (f"{over['tokens'].iloc[0] / 1e6:.1f}" if len(over) else "-"))
    return ", ".join(said)


CLEARED, PENDING, FAILED = 1, 0, -1  # a checkpoint's standing against the margin


def _standing(g: pd.DataFrame, margin: float) -> Any:
    """Per checkpoint: CLEARED where every seed of the model is there and clears `margin`;
    FAILED where a seed there does not (whatever the seeds still running do); PENDING where
    the seeds there clear it but a running seed has not reached it: not known yet."""
    clears = (g["least"] > margin).to_numpy()
    complete = (g["seeds"] == g["runs"]).to_numpy()
    return np.where(~clears, FAILED, np.where(complete, CLEARED, PENDING))


def _first_separated(g: pd.DataFrame, margin: float) -> tuple[Any, bool]:
    """The first checkpoint whose gap clears `margin` at every seed, and whether it stays
    clear: no later checkpoint fails it (one some seed has not reached yet does not)."""
    standing = _standing(g, margin)
    if not (standing == CLEARED).any():
        return None, False
    first = int((standing == CLEARED).argmax())
    return g.iloc[first], bool((standing[first:] != FAILED).all())


def _staying_from(g: pd.DataFrame, margin: float) -> Any:
    """The first checkpoint cleared at every seed after the last one that failed: the one
    from which the gap stays clear; None where none is cleared since the last failure."""
    standing = _standing(g, margin)
    failed = np.flatnonzero(standing == FAILED)
    since = failed[-1] + 1 if failed.size else 0
    cleared = np.flatnonzero(standing[since:] == CLEARED)
    return g.iloc[since + cleared[0]] if cleared.size else None


@dataclass(frozen=True)
class OperatingPoint:
    """Where an arm's model clears `needed` gates against its twin, and stays clear: the
    checkpoint from which the `needed`-th instrument separates for good."""

    model: str
    tokens: float
    cpu_hours: float
    instruments: tuple[str, ...]  # those separated for good by then
    seeds: int

    def describe(self) -> str:
        return (
            f"{self.model} at {self.tokens / 1e6:.1f}M tokens ({self.cpu_hours:.2f} CPU-hours, "
            f"{self.seeds} seed{'s' * (self.seeds != 1)}): {', '.join(self.instruments)}"
        )


def operating_point(
    df: pd.DataFrame, objective: str = "ce", needed: int = 2
) -> tuple[OperatingPoint | None, list[OperatingPoint]]:
    """The cheapest (CPU-hours) checkpoint of any `objective` model from which `needed` gated
    instruments separate from its twin and stay separated; and per model, where it stands
    now (the instruments separated for good, from the first of them), to say how far off
    the point is where there is none."""
    arm = set(df.loc[df["objective"] == objective, "model"]) & set(twins(df))
    since: dict[str, list[tuple[str, Any]]] = {m: [] for m in sorted(arm)}
    for inst in INSTRUMENTS:
        margin, g_all = inst.margin(), gaps(df, inst)
        if margin is None or g_all.empty:
            continue
        for model, g in g_all[g_all["model"].isin(arm)].groupby("model"):
            start = _staying_from(g.sort_values("step"), margin)
            if start is not None:
                since[str(model)].append((inst.name, start))
    standing, reached = [], []
    for model, found in since.items():
        found.sort(key=lambda f: f[1]["tokens"])
        at = found[min(needed, len(found)) - 1][1] if found else None
        point = OperatingPoint(
            model,
            float(at["tokens"]) if at is not None else math.nan,
            float(at["cpu_hours"]) if at is not None else math.nan,
            tuple(name for name, _ in found),
            int(at["seeds"]) if at is not None else 0,
        )
        standing.append(point)
        if len(found) >= needed:
            reached.append(point)
    return min(reached, key=lambda p: p.cpu_hours, default=None), standing


SEPARATION_NOTE = (
    "separates: every seed's gap to the twins' mean clears the gate's margin (a rule to plan "
    "by; the test is the interval over seeds); each seed: where its own gap first clears it "
    "(-: never); CPU-hours: the training loop's wall time on one thread"
)


def point_lines(df: pd.DataFrame) -> list[str]:
    """The operating point in a line; where there is none, that line and then each ce
    model's standing, a line each."""
    point, standing = operating_point(df)
    if point is not None:
        return [f"operating point (ce, two gates cleared for good): {point.describe()}"]
    return [
        "no operating point yet: no ce model clears two gates and stays clear",
        *(
            p.describe() if p.instruments else p.model + ": no gate cleared for good"
            for p in standing
        ),
    ]


def separation_table(df: pd.DataFrame) -> pd.DataFrame:
    """A row per model and gated instrument: where every seed first separates from its twin
    (tokens, CPU-hours), where each seed does, whether it stays, and the gap at the last
    checkpoint with its interval."""
    rows, bf16 = [], trained_in_bf16(df)
    for inst in INSTRUMENTS:
        margin = inst.margin()
        g_all, per_seed = gaps(df, inst), seed_gaps(df, inst)
        for model, g in g_all.groupby("model") if not g_all.empty else []:
            g = g.sort_values("step")
            last = g.iloc[-1]
            first, stays = _first_separated(g, margin) if margin is not None else (None, False)
            rows.append(
                {
                    "model": str(model) + (" (bf16)" if model in bf16 else ""),
                    "instrument": inst.name,
                    "margin": "comparison" if margin is None else f"{margin:g}",
                    "separates at (M tokens)": ""
                    if first is None
                    else f"{first['tokens'] / 1e6:.1f}",
                    "CPU-hours then": "" if first is None else f"{first['cpu_hours']:.2f}",
                    "each seed (M tokens)": ""
                    if margin is None
                    else _each_seed(per_seed[per_seed["model"] == model], margin),
                    "stays": "" if first is None else ("yes" if stays else "no"),
                    "last gap [95 % CI]": _interval(last),
                    "at (M tokens)": f"{last['tokens'] / 1e6:.1f}",
                    "seeds": int(last["seeds"]),
                }
            )
    return pd.DataFrame(rows)


def trained_in_bf16(df: pd.DataFrame) -> set[str]:
    """The models whose pretraining ran under bf16 autocast, read from their rows' config
    (a model is labelled so in the table: its precision is part of what was run)."""
    first = df.drop_duplicates("model")
    return {
        str(m)
        for m, c in zip(first["model"], first["config"], strict=True)
        if isinstance(c, str) and (cell_config(c).pretrain or {}).get("bf16") is True
    }


def _interval(r: pd.Series) -> str:
    """The gap with its interval; one seed, or seeds without spread, said so."""
    if r["seeds"] < 2:
        return f"{r['gap']:+.3f} (one seed)"
    if math.isnan(r["low"]):
        return f"{r['gap']:+.3f} (no spread)"
    return f"{r['gap']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]"


def plot_separation(df: pd.DataFrame, out: Path, formats: tuple[str, ...] = ("png",)) -> list[Path]:
    """`separation.png`: a panel per instrument, the gap to the twin against tokens: per
    model a thin line for each seed and a bold one for their mean (at the checkpoints every
    seed has reached), the gate's margin dashed, the operating point (where there is one)
    dotted."""
    panels = [(inst, gaps(df, inst), seed_gaps(df, inst)) for inst in INSTRUMENTS]
    panels = [p for p in panels if not p[1].empty]
    if not panels:
        return []
    colors = palette(df)
    point, _ = operating_point(df)
    cols = min(3, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    for ax, (inst, g, per_seed) in zip(axes.flat, panels, strict=False):
        _draw_model_lines(ax, g, per_seed, colors)
        margin = inst.margin()
        ax.axhline(0, color="grey", linewidth=0.8)
        if margin is not None:
            ax.axhline(margin, color="black", linestyle="--", linewidth=0.8, label="gate margin")
        if point is not None:
            where = f"operating point ({point.model})"
            ax.axvline(point.tokens / 1e6, color="grey", linestyle=":", linewidth=1, label=where)
        ax.set_title(inst.name + ("" if margin is not None else " (no bar)"), fontsize=9)
        ax.set_xlabel("tokens seen (M)")
        ax.set_ylabel(f"{inst.metric}: model - untrained twin")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    title = "gap to the untrained twin along pretraining (thin: each seed; bold: their mean)"
    return save(fig, title, figure_path(out, "separation"), formats)


def _draw_model_lines(
    ax: Any, g: pd.DataFrame, per_seed: pd.DataFrame, colors: dict[str, Any]
) -> None:
    """Each model's seeds, thin, and their mean, bold, where every seed has a row: a mean
    of the seeds that got there first would jump where a running seed stops."""
    for model, line in g.sort_values("tokens").groupby("model"):
        color = colors[str(model)]
        for _, seed in per_seed[per_seed["model"] == model].sort_values("tokens").groupby("seed"):
            ax.plot(seed["tokens"] / 1e6, seed["gap"], linewidth=0.8, alpha=0.45, color=color)
        whole, n = line[line["seeds"] == line["runs"]], int(line["runs"].max())
        ax.plot(whole["tokens"] / 1e6, whole["gap"], marker="o", markersize=3, linewidth=1.8,
                label=f"{model} ({n} seed{'s' * (n != 1)})", color=color)  # fmt: skip
