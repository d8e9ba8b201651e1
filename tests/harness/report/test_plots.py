"""Figures: one line per model, never merged across models that share an objective."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from matplotlib.container import ErrorbarContainer
from PIL import Image

from harness.report import plots
from harness.report.plots import groups, make_plots, sweep_series
from tests.harness.results.test_leaderboard import row


def _sweep_rows() -> pd.DataFrame:
    rows = []
    for model, values in (("cwt", (9.0, 8.0)), ("cwt+FT", (5.5, 5.0))):
        for batch, value in zip((16, 32), values, strict=True):
            r = row(model, "val_ppl", value, step=100)
            r.update(
                objective="cwt", sweep=json.dumps({"batch_size": batch}), cell_id=f"{model}{batch}"
            )
            rows.append(r)
    return pd.DataFrame(rows)


def test_sweep_lines_are_per_model(tmp_path) -> None:
    series = sweep_series(_sweep_rows(), "batch_size", "val_ppl")
    assert set(series) == {"cwt", "cwt+FT"}  # was one "cwt" line at 7.25 ± 2.47
    assert list(series["cwt"]["mean"]) == [9.0, 8.0] and list(series["cwt+FT"]["mean"]) == [
        5.5,
        5.0,
    ]
    assert (tmp_path / "sweep-batch_size.png") in make_plots(_sweep_rows(), tmp_path)


def test_figures_are_palette_pngs_and_the_same_rows_give_the_same_bytes(tmp_path) -> None:
    first = make_plots(_sweep_rows(), tmp_path / "a")
    again = make_plots(_sweep_rows(), tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in again] and first
    for a, b in zip(first, again, strict=True):
        assert a.read_bytes() == b.read_bytes()
        with Image.open(a) as image:
            assert image.format == "PNG" and image.mode == "P"
            assert len(image.getcolors(256) or []) > 8  # lines, text and grid, not a blank


def test_a_sweep_panel_holds_one_task(tmp_path, monkeypatch) -> None:
    """Accuracy on two GLUE tasks gets two panels, never one line of their mean."""
    rows = []
    for task, value in (("glue/sst2", 0.8), ("glue/mrpc", 0.6)):
        for vocab in (8192, 16384):
            r = row("bert-ce", "accuracy", value, task=task)
            r.update(sweep=json.dumps({"vocab_size": vocab}), cell_id=f"{task}{vocab}")
            rows.append(r)
    drawn: list[tuple[str, list[float]]] = []
    real = plots._finish_axis

    def record(ax: Any, metric: str, xlabel: str, title: str = "") -> None:
        drawn.append((title, [float(y) for line in ax.get_lines() for y in line.get_ydata()]))
        real(ax, metric, xlabel, title)

    monkeypatch.setattr(plots, "_finish_axis", record)
    plots.plot_sweeps(pd.DataFrame(rows), tmp_path)
    assert sorted(drawn) == [("glue/mrpc", [0.6, 0.6]), ("glue/sst2", [0.8, 0.8])]


def _board() -> pd.DataFrame:
    """Encoders and decoders, CE and CWT, two steps, one seed."""
    rows = []
    for model, preset, objective, loss in (
        ("bert-ce", "bert-tiny", "ce", 6.0),
        ("bert-cwt", "bert-tiny", "cwt", 2.6),
        ("pythia-ce", "pythia-tiny", "ce", 5.0),
    ):
        for step in (5, 10):
            for metric, value in (("val_loss", loss), ("val_ppl", 300.0 + step)):
                r = row(model, metric, value - step / 100, step=step)
                r.update(
                    preset=preset,
                    objective=objective,
                    cell_id=f"{model}.{step}",
                    tokens_seen=step * 100,
                    train_flops=step * 1e9,
                    train_seconds=step,
                )
                rows.append(r)
    return pd.DataFrame(rows)


def test_values_compare_only_within_their_group() -> None:
    df = _board()
    loss = groups(df[df["metric"] == "val_loss"], "val_loss")
    assert [g for g, _ in loss] == ["decoder · ce", "encoder · ce", "encoder · cwt"]
    assert [g for g, _ in groups(df[df["metric"] == "val_ppl"], "val_ppl")] == [
        "decoder",
        "encoder",
    ]  # MLM and CLM perplexities apart
    assert [g for g, _ in groups(df, "acc")] == [""]


def test_colours_log_axes_and_caps(tmp_path, monkeypatch) -> None:
    figures: dict[str, Any] = {}

    def keep(fig: Any, title: str, path: Any, formats: Any = ("png",)) -> list[Any]:
        figures[title.split(" (")[0]] = fig
        return [path]

    monkeypatch.setattr(plots, "save", keep)
    df = _board()
    make_plots(df, tmp_path)
    colours: dict[str, set] = {}
    for fig in figures.values():
        for ax in fig.axes:
            for line in ax.get_lines():
                if not line.get_label().startswith("_"):
                    colours.setdefault(line.get_label(), set()).add(line.get_color())
            if "val_ppl" in ax.get_ylabel() or "val_ppl" in ax.get_title():
                assert ax.get_yscale() == "log"
            if "val_loss" in ax.get_ylabel():
                assert ax.get_yscale() == "linear"
    assert set(colours) == {"bert-ce", "bert-cwt", "pythia-ce"}
    assert all(len(c) == 1 for c in colours.values())  # one colour per model everywhere
    assert len({next(iter(c)) for c in colours.values()}) == 3
    bars = [c for ax in figures["validation"].axes for c in ax.containers]
    error_bars = [c for c in bars if isinstance(c, ErrorbarContainer)]
    assert error_bars  # the perplexity points carry error bars
    assert all(len(c.lines[1]) == 0 for c in error_bars)  # one seed: no caps
    assert plots.palette(df.iloc[::-1]) == plots.palette(df)
    _plain_log_ticks(list(figures.values()))


def _plain_log_ticks(figures: list[Any]) -> None:
    """Log axes read as plain numbers, never 2x10^2."""
    for fig in figures:
        fig.canvas.draw()
        for ax in [a for a in fig.axes if a.get_yscale() == "log"]:
            labels = [t.get_text() for t in ax.get_yticklabels(which="both")]
            assert any(labels) and not any("10^" in t or "times" in t for t in labels)


def test_a_fine_tuned_models_loss_shares_the_ce_axis_never_cwts() -> None:
    """A causally fine-tuned headless decoder's validation loss is a CE loss: its panel is
    the CE models', never the CWT loss's."""
    df = _board()
    tuned = df[df["model"] == "bert-cwt"].assign(
        model="pythia-cwt-ft",
        preset="pythia-tiny",
        config=json.dumps({"finetune_causal": True}),
    )
    loss = pd.concat([df, tuned])
    loss = loss[loss["metric"] == "val_loss"]
    by_group = {g: sorted(set(d["model"])) for g, d in groups(loss, "val_loss")}
    assert by_group["decoder · ce"] == ["pythia-ce", "pythia-cwt-ft"]
    assert "decoder · cwt" not in by_group


def test_pdf_and_svg_are_written_and_the_same_rows_give_the_same_bytes(tmp_path) -> None:
    first = make_plots(_board(), tmp_path / "a", formats=("png", "pdf", "svg"))
    again = make_plots(_board(), tmp_path / "b", formats=("png", "pdf", "svg"))
    assert {p.suffix for p in first} == {".png", ".pdf", ".svg"}
    for a, b in zip(first, again, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert first[1].read_bytes().startswith(b"%PDF") and b"<svg" in first[2].read_bytes()


def test_a_handful_of_scores_is_drawn_as_seed_points_and_an_interval(tmp_path, monkeypatch):
    """0/1 per-example scores get no histogram: each seed's mean, and the mean's interval
    over the seeds."""
    from harness.report import distributions

    figures: dict[str, Any] = {}
    monkeypatch.setattr(
        distributions,
        "save",
        lambda fig, title, path, formats=(): figures.update({title: fig}) or [path],
    )
    samples = pd.DataFrame(
        [
            {"model": m, "seed": seed, "step": 10, "task": "t", "metric": "acc", "key": str(i),
             "value": float(i < 20 + 3 * seed + 5 * (m == "b")), "cell_id": f"{m}{seed}",
             "sweep": "{}"}
            for m in ("a", "b") for seed in (0, 1, 2) for i in range(40)
        ]
    )  # fmt: skip
    distributions.plot_distributions(samples, tmp_path)
    (fig,) = figures.values()
    (ax,) = fig.axes
    assert not ax.patches  # no histogram bars
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert len(ax.containers) == 2  # one interval a model: three seeds each


def test_hlm_plot_says_what_it_replaced_and_the_committed_plots_are_its_own(
    tmp_path, capsys
) -> None:
    """`hlm plot SUITE` over a committed leaderboard changes none of its committed PNGs (they
    are what the command makes of those rows), and says of each file it writes whether it
    is new or replaced one that differed."""
    import shutil
    from pathlib import Path

    from harness.cli import main as hlm

    committed = Path(__file__).parents[3] / "leaderboards" / "paper-cpu-batch"
    board = tmp_path / "paper-cpu-batch"
    shutil.copytree(committed, board)
    assert hlm(["plot", "paper-cpu-batch", "--leaderboards", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    made = sorted((board / "_plots").glob("*.png"))
    assert made and f"{len(made)} plots in {board / '_plots'}: 0 new, 0 replaced" in out
    for png in made:
        assert png.read_bytes() == (committed / "_plots" / png.name).read_bytes(), png.name
    (board / "_plots" / made[0].name).write_bytes(b"stale")
    assert hlm(["plot", "paper-cpu-batch", "--leaderboards", str(tmp_path)]) == 0
    assert f"{made[0].name} (replaced)" in capsys.readouterr().out


def test_a_family_of_many_sub_tasks_is_drawn_by_its_overall_rows(tmp_path) -> None:
    """BLiMP's 67 paradigms get no figure each: the overall `blimp` rows are drawn, the
    paradigms stay in the tables; a family of a few sub-tasks (GLUE's) is drawn per task."""
    rows = [row("m", "accuracy", 0.6, task="blimp")]
    rows += [row("m", "accuracy", 0.5, task=f"blimp/p{i}") for i in range(plots.MAX_SUBTASKS + 1)]
    rows += [row("m", "accuracy", 0.7, task=f"glue/t{i}") for i in range(3)]
    kept = set(plots.drawn_tasks(pd.DataFrame(rows))["task"])
    assert kept == {"blimp", "glue/t0", "glue/t1", "glue/t2"}
    names = {p.name for p in make_plots(pd.DataFrame(rows), tmp_path)}
    assert "bars-blimp.png" in names and not any(n.startswith("bars-blimp_p") for n in names)
