"""The reproduction report (`harness.paper.findings`, `harness.paper.compare`,
`harness.paper.sources`, `harness.paper.document`): every paper figure has a source, the seed
is the unit, verdicts are symmetric and follow the Holm-adjusted p, gates use the task's own
metric, and docs/REPRODUCTION.md is what `hlm report --paper` makes of the committed
leaderboards."""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from harness.paper.document import HEADLINE, headline, render, write_reproduction
from harness.paper.figures import PAPER
from harness.paper.findings import findings
from harness.paper.sources import CPU, GPU, SCALES, Scale, source_of
from harness.results.leaderboard import write_cell
from harness.results.schema import COLUMNS
from harness.suite import load_suite

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_every_figure_has_a_source_with_its_metric() -> None:
    for fig in PAPER:
        source = source_of(fig)
        assert source.unavailable or source.metric == fig.metric, fig.key
        assert "vanilla" in source.roles and len(source.roles) >= 2
        assert (ROOT / "suites" / f"{source.suite}.yaml").is_file(), source.suite


def _row(model: str, task: str, metric: str, value: float, seed: int, step: int = 3000) -> dict:
    r = dict.fromkeys(COLUMNS)
    seconds = step * (0.1 if model.endswith("cwt") else 0.15)
    r.update(
        suite="paper-cpu-encoder",
        suite_version=1,
        cell_id="c",
        model=model,
        seed=seed,
        task=task,
        metric=metric,
        value=value,
        step=step,
        train_seconds=seconds,
        sweep="{}",
        config="{}",
        git_sha="",
        versions="{}",
        timestamp=T0 + timedelta(seconds=step),
    )
    return r


def _encoder_rows(
    tmp: Path,
    sst2_ce: float,
    gain: float,
    suite: str = "paper-cpu-encoder",
    seeds: int = 3,
    arms: tuple[str, ...] = ("ce", "cwt"),
    **columns: str,
) -> Path:
    """`seeds` seeds of ce and cwt at steps 1000-3000: cwt better by `gain` (+0.002 x seed)
    on the average (bert-tiny, or bert-small in a paper-gpu suite)."""
    preset = "bert-small" if "gpu" in suite else "bert-tiny"
    rows = []
    for seed in range(seeds):
        noise = 0.002 * seed
        for step in (1000, 2000, 3000):
            for model, g in ((f"{preset}-ce", 0.0), (f"{preset}-cwt", gain + noise)):
                if model.rsplit("-", 1)[1] not in arms:
                    continue
                rows += [
                    _row(model, "glue/sst2", "accuracy", sst2_ce + g + noise, seed, step),
                    _row(model, "glue/sst2", "majority", 0.51, seed, step),
                    _row(model, "glue/stsb", "spearman", 0.3 + g, seed, step),
                    _row(model, "glue/stsb", "pearson", 0.3 + g, seed, step),
                    _row(model, "glue/stsb", "majority", 0.0, seed, step),
                    _row(
                        model, "glue/average", "average", 0.5 + g + noise + step / 1e5, seed, step
                    ),
                ]
    write_cell(tmp / suite, "rows", [{**r, **columns} for r in rows])
    # the side-by-side speed ratio the equal-time comparison reads (paper-cpu-ablation)
    speed = [
        {**_row(f"{preset}-cwt", "throughput", "speedup_vs_baseline", 1.5, seed), "step": None}
        for seed in range(3)
    ]
    ablation = "paper-cpu-ablation" if "cpu" in suite else suite  # a GPU suite measures its own
    write_cell(tmp / ablation, "speed", speed)
    return tmp


def _by_key(found, key: str):
    return next(f for f in found if f.figure.key.startswith(key))


def test_verdicts_follow_the_rows(tmp_path) -> None:
    found = findings(_encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    avg = _by_key(found, "table1-tokens: GLUE average")
    c = avg.comparison
    assert avg.verdict == "reproduced" and avg.seeds == 3 and c.test == "paired t-test over 3 seeds"
    assert avg.gain == pytest.approx(0.022) and avg.interval[0] < 0.022 < avg.interval[1]
    assert avg.p_value < avg.p_adjusted < 0.05  # Holm over every test of the report
    # equal time: cwt's 3000 steps take as long as ce's 2000 at the measured 1.5x
    timed = _by_key(found, "table1-time: GLUE average")
    assert "speed ratio 1.50x measured side by side" in timed.measured.detail
    assert "seed 0: vanilla step 2000" in timed.measured.detail
    assert timed.gain == pytest.approx(0.022 + 0.01)
    along = _by_key(found, "figure3")
    assert along.verdict == "reproduced" and "step 1000: +0.022" in along.measured.detail
    assert along.seeds == 3  # the checkpoints of a seed are reduced to one value first
    assert _by_key(found, "table1-tokens: GLUE QNLI").reason.startswith("no rows: no local")
    assert _by_key(found, "table3").reason.startswith("no rows: nothing committed")
    cpu = [f for f in found if f.scale == "CPU"]
    claims = [f for f in cpu if f.figure.compared]
    assert len(cpu) == 47 and len(claims) == 41
    assert {f.verdict for f in claims} <= {
        "reproduced",
        "contradicted",
        "inconclusive",
        "not comparable",
    }
    assert "41 comparisons of the paper's claims in the tables below" in headline(found)
    worse = findings(_encoder_rows(tmp_path / "w", sst2_ce=0.78, gain=-0.02))
    assert _by_key(worse, "table1-tokens: GLUE average").verdict == "contradicted"


def test_a_gap_that_is_not_significant_is_inconclusive_either_way(tmp_path) -> None:
    """The same weak, noisy gap in either direction: inconclusive, with the power said."""
    for sign in (1, -1):
        rows = []
        for seed, noise in enumerate((0.03, -0.02, 0.0)):
            for model, g in (("bert-tiny-ce", 0.0), ("bert-tiny-cwt", sign * (0.002 + noise))):
                rows += [
                    _row(model, "glue/sst2", "accuracy", 0.8, seed),
                    _row(model, "glue/sst2", "majority", 0.51, seed),
                    _row(model, "glue/stsb", "pearson", 0.3, seed),
                    _row(model, "glue/average", "average", 0.5 + g, seed),
                ]
        root = tmp_path / str(sign)
        write_cell(root / "paper-cpu-encoder", "rows", rows)
        avg = _by_key(findings(root), "table1-tokens: GLUE average")
        assert avg.verdict == "inconclusive", avg.reason
        assert "3 seeds detect |Δ| ≥" in avg.reason and "the paper's Δ (0.0086)" in avg.reason


@pytest.mark.parametrize("scale", SCALES[1:], ids=lambda s: s.name)
def test_each_larger_scale_compares_the_encoder_and_decoder_figures(scale: Scale) -> None:
    """Every scale past the CPU one compares the CPU parts' figures it has suites for, with the
    same tasks, metrics and gates, between models its own suites train."""
    for fig in PAPER:
        cpu, big = CPU.source(fig), scale.source(fig)
        assert cpu == source_of(fig)
        if cpu.suite not in scale.suites:
            assert big is None, fig.key  # the sweeps, XNLI, the ablation: CPU only
            continue
        assert big is not None and big.suite == scale.suites[cpu.suite]
        assert (big.task, big.metric, big.at, big.checks) == (
            cpu.task,
            cpu.metric,
            cpu.at,
            cpu.checks,
        )
        trained = {m.label() for m in load_suite(ROOT / "suites" / f"{big.suite}.yaml").models}
        assert set(big.roles.values()) <= trained, fig.key
        presets = tuple(f"{p}-" for p in scale.models.values())
        assert all(m.startswith(presets) for m in big.roles.values())


def test_gpu_rows_get_their_own_section_labelled_with_the_gpu(tmp_path) -> None:
    pending = render(findings(_encoder_rows(tmp_path / "cpu", sst2_ce=0.78, gain=0.02)))
    assert pending.endswith(GPU.pending + "\n")  # nothing run at GPU scale yet
    h100 = "cuda x1: NVIDIA H100 80GB HBM3"
    root = _encoder_rows(tmp_path / "gpu", 0.78, -0.03, "paper-gpu-encoder", hardware=h100)
    _encoder_rows(root, sst2_ce=0.78, gain=0.02)  # the CPU part beside it
    found = findings(root)
    gpu = _by_key([f for f in found if f.scale == "GPU"], "table1-tokens: GLUE average")
    assert gpu.source.roles == {"vanilla": "bert-small-ce", "headless": "bert-small-cwt"}
    assert gpu.verdict == "contradicted"
    assert _by_key(found, "table1-tokens: GLUE average").verdict == "reproduced"  # CPU's
    text = headline(found)
    assert text.startswith("At CPU scale, 41 comparisons")
    assert "At GPU scale," in text and "bert-small-cwt 50.4 against bert-small-ce" in text
    page = render(found, root).split("## At GPU scale: bert-small and pythia-70m")[1]
    assert f"`paper-gpu-encoder` (`hlm run paper-gpu-encoder`); trained on {h100}." in page
    assert "bert-small-cwt (3000 steps" in page and "| contradicted |" in page


def test_a_larger_scale_states_its_power_and_says_when_one_arm_has_rows(tmp_path) -> None:
    """A scale with rows gets its own power table (one seed: no spread yet, and the row says
    so); a scale whose rows hold one arm only says that, not that it has no rows."""
    root = _encoder_rows(tmp_path / "gpu", 0.78, 0.02, "paper-gpu-encoder", hardware="cuda x1")
    page = render(findings(root), root).split("## At GPU scale: bert-small and pythia-70m")[1]
    power = page.split("### Power at GPU scale")[1].split("\n## ")[0]
    assert "| Table 1: GLUE average dev, equal tokens (headless) | 3 |" in power
    one = _encoder_rows(tmp_path / "one", 0.78, 0.02, "paper-gpu-encoder", seeds=1)
    page = render(findings(one), one).split("## At GPU scale: bert-small and pythia-70m")[1]
    assert "| Table 1: GLUE average dev, equal tokens (headless) | 1 | - (one seed" in page
    cwt = _encoder_rows(
        tmp_path / "cwt", 0.78, 0.02, "paper-gpu-encoder", arms=("cwt",), hardware="cuda x1"
    )
    page = render(findings(cwt)).split("## At GPU scale: bert-small and")[1]
    assert "No figure has both arms' rows yet. These suites repeat" in page
    assert "No rows committed yet" not in page
    avg = _by_key([f for f in findings(cwt) if f.scale == "GPU"], "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable" and "gate failed" not in avg.reason
    assert avg.reason.startswith("no rows: the vanilla model bert-small-ce has no glue/average")


def test_a_suites_html_section_needs_no_glue_figure(tmp_path) -> None:
    """`hlm report` of a decoder suite: its findings hold no GLUE average to lead with."""
    from harness.paper.document import render_html

    decoder = findings(tmp_path, suite="paper-cpu-decoder")
    assert decoder and {f.figure.claim for f in decoder} >= {"table3", "table4"}
    n = sum(f.figure.compared for f in decoder)
    lead = (
        f"At CPU scale, {n} comparisons of the paper&#x27;s claims that paper-cpu-decoder compares"
    )
    assert lead in render_html(decoder, "paper-cpu-decoder")
    assert "no claim passes its gates" in render_html(decoder, "paper-cpu-decoder")


def _decoder_loss_rows(tmp_path: Path, ft_loss: list[float]) -> Path:
    rows = []
    for seed, loss in enumerate(ft_loss):
        for model, ce in (("pythia-tiny-ce", 4.8 + 0.01 * seed**2), ("pythia-tiny-cwt-ft", loss)):
            rows += [
                _row(model, "validation", "val_ce", ce, seed),
                _row(model, "validation", "val_ppl", 2.718**ce, seed),
                _row(model, "validation", "unigram_ppl", 900.0, seed),
            ]
    write_cell(tmp_path / "paper-cpu-decoder", "rows", [{**r, "suite": "x"} for r in rows])
    return tmp_path


def test_verdicts_are_symmetric_in_the_papers_direction(tmp_path) -> None:
    """Table 3: the paper has headless+ft's validation loss worse than vanilla. Ours worse in
    every seed: reproduced; ours better in every seed: contradicted (the same test, two-sided)."""
    worse = _by_key(
        findings(_decoder_loss_rows(tmp_path / "a", [5.1, 5.13, 5.12])), "table3: validation loss"
    )
    assert worse.verdict == "reproduced" and worse.p_adjusted < 0.05, worse.reason
    assert worse.gain == pytest.approx(-(5.1 + 5.13 + 5.12) / 3 + 4.8 + 5 / 300)
    assert "worse than vanilla, as the paper has it" in worse.reason
    better = _by_key(
        findings(_decoder_loss_rows(tmp_path / "b", [4.5, 4.53, 4.52])), "table3: validation loss"
    )
    assert better.verdict == "contradicted" and "where the paper has it worse" in better.reason
    assert better.p_value == pytest.approx(worse.p_value, rel=0.2)


def test_a_vanilla_model_at_its_majority_baseline_is_not_comparable(tmp_path) -> None:
    found = findings(_encoder_rows(tmp_path, sst2_ce=0.52, gain=0.02))
    avg = _by_key(found, "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable" and math.isnan(avg.p_adjusted)
    assert "gate failed: the vanilla model's glue/sst2 accuracy 0.522" in avg.reason
    assert "needs at least majority + 0.05 = 0.560" in avg.reason
    assert "no claim passes its gates at this scale" in headline(found)


def test_gates_use_the_tasks_own_metric(tmp_path) -> None:
    """MRPC is gated on F1 against the F1 of always answering the majority class, not on
    accuracy: balanced fine-tuning trades accuracy for the minority class's recall."""
    root = _encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    rows = [
        _row(model, "glue/mrpc", metric, value, seed)
        for seed in range(3)
        for model in ("bert-tiny-ce", "bert-tiny-cwt")
        for metric, value in (("accuracy", 0.62), ("f1", 0.85), ("majority", 0.684))
    ]
    write_cell(root / "paper-cpu-encoder", "mrpc", rows)
    mrpc = _by_key(findings(root), "table1-tokens: GLUE MRPC")
    assert mrpc.verdict != "not comparable", mrpc.reason  # accuracy under the majority share
    assert any("glue/mrpc f1 0.85" in g.text and g.passed for g in mrpc.gates)


def test_the_readme_headline_is_rewritten_between_its_markers(tmp_path) -> None:
    root = _encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    readme = tmp_path / "README.md"
    readme.write_text(
        "a\n<!-- reproduction-headline -->\nold\n<!-- /reproduction-headline -->\nb\n"
    )
    doc = tmp_path / "docs" / "REPRODUCTION.md"
    plots = root / "paper-cpu-encoder" / "_plots"
    plots.mkdir(parents=True)
    (plots / "curves-glue_average-average.png").write_bytes(b"")
    (plots / "bars-synonyms.png").write_bytes(b"")  # a task no GLUE finding reads
    assert write_reproduction(root, doc, readme) == [doc, readme]
    text = readme.read_text()
    assert "old" not in text and "24.0" not in text and "reproduced" in text
    assert doc.read_text() == render(findings(root), root)
    table1 = doc.read_text().split("## Table 1: GLUE at equal tokens")[1].split("##")[0]
    link = "../leaderboards/paper-cpu-encoder/_plots/curves-glue_average-average.png"
    assert f"Plots: [curves-glue_average-average]({link})." in table1
    assert "bars-synonyms" not in table1


def test_reproduction_doc_is_generated_from_the_committed_leaderboards(tmp_path) -> None:
    """docs/REPRODUCTION.md and the README headline: `hlm report --paper` output, unedited."""
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    doc = tmp_path / "REPRODUCTION.md"
    write_reproduction(ROOT / "leaderboards", doc, tmp_path / "README.md")
    assert doc.read_text() == (ROOT / "docs" / "REPRODUCTION.md").read_text()
    match = HEADLINE.search((ROOT / "README.md").read_text())
    assert match is not None, "README.md lacks the reproduction-headline markers"
    assert (tmp_path / "README.md").read_text() == (ROOT / "README.md").read_text()


def test_hlm_report_paper_out_writes_only_the_page(tmp_path, monkeypatch) -> None:
    from harness.cli import main as hlm

    root = _encoder_rows(tmp_path / "lb", sst2_ce=0.78, gain=0.02)
    readme = tmp_path / "README.md"
    original = "a\n<!-- reproduction-headline -->\nold\n<!-- /reproduction-headline -->\n"
    readme.write_text(original)
    monkeypatch.chdir(tmp_path)
    assert hlm(["report", "--paper", "--out", "copy.md", "--leaderboards", str(root)]) == 0
    assert readme.read_text() == original and "reproduced" in (tmp_path / "copy.md").read_text()
    assert hlm(["report", "--paper", "--leaderboards", str(root)]) == 0  # the project's page
    assert "old" not in readme.read_text() and (tmp_path / "docs/REPRODUCTION.md").is_file()


def test_figure2_is_judged_on_ratios_measured_side_by_side(tmp_path) -> None:
    """Figure 2: the speed ratio of each batch size as the throughput task measured it,
    vanilla and headless alternating (never step times of separate runs divided)."""
    rows = []
    for batch, speedup in ((8, 1.38), (16, 1.51), (32, 1.39), (64, 1.49)):
        for model, value in (("bert-small-ce", 1.0), ("bert-small-cwt", speedup)):
            r = _row(model, "throughput", "speedup_vs_baseline", value, 0)
            rows.append({**r, "sweep": json.dumps({"batch_size": batch})})
    write_cell(tmp_path / "paper-cpu-throughput", "rows", rows)
    fig2 = _by_key(findings(tmp_path), "figure2: training speed")
    assert fig2.gain == pytest.approx((0.38 + 0.51 + 0.39 + 0.49) / 4)
    assert fig2.comparison.test == "paired t-test over 4 side-by-side measurements"
    assert "batch_size 8: +0.38, batch_size 16: +0.51" in fig2.measured.detail
    assert fig2.verdict == "reproduced"


def test_a_seed_only_one_model_has_yet_is_left_out(tmp_path) -> None:
    """A run in progress: vanilla's seed 3 is in, headless's is not. The comparison stays on
    the seeds both have (the extra seed's very low average would otherwise count)."""
    root = _encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    extra = [_row("bert-tiny-ce", "glue/average", "average", 0.1, 3, step) for step in (1000, 3000)]
    write_cell(root / "paper-cpu-encoder", "extra", extra)
    avg = _by_key(findings(root), "table1-tokens: GLUE average")
    assert avg.seeds == 3 and avg.gain == pytest.approx(0.022)


def test_each_xnli_set_up_needs_its_own_vanilla_above_chance(tmp_path) -> None:
    """Table 5: translate-train above chance says nothing of zero-shot transfer at chance."""
    scores = {"translate-train": (0.40, 0.43), "zero-shot": (0.34, 0.36)}
    rows = [
        _row(model, f"xnli-{mode}/average", "average", value, seed=0)
        for mode, pair in scores.items()
        for model, value in zip(("bert-tiny-ce", "bert-tiny-cwt"), pair, strict=True)
    ]
    write_cell(tmp_path / "paper-cpu-xnli", "rows", rows)
    found = findings(tmp_path)
    target = _by_key(found, "table5: XNLI average, fine-tuned on the target language")
    assert target.verdict == "inconclusive" and target.gain == pytest.approx(0.03)
    assert "no seed-level spread" in target.reason  # one seed: no test, and it says so
    english = _by_key(found, "table5: XNLI average, fine-tuned on English only")
    assert english.verdict == "not comparable"
    assert (
        "xnli-zero-shot/average average 0.34 (needs at least chance (0.333) + 0.02"
        in english.reason
    )


def test_xnli_languages_are_detail_the_test_is_over_seeds(tmp_path) -> None:
    """The languages of one pretraining run are not independent samples: the test is over
    seeds (paired where both have them); each language's mean gap is shown; vanilla's seed 2,
    which headless lacks yet, is left out."""
    ce = {0: {"ar": 0.38, "hi": 0.33}, 1: {"ar": 0.40, "hi": 0.35}, 2: {"ar": 0.0, "hi": 0.0}}
    cwt = {0: {"ar": 0.45, "hi": 0.44}, 1: {"ar": 0.41, "hi": 0.42}}
    rows = []
    for model, runs in (("bert-tiny-ce", ce), ("bert-tiny-cwt", cwt)):
        for seed, scores in runs.items():
            rows += [
                _row(model, f"xnli-translate-train/{lang}", "accuracy", v, seed)
                for lang, v in scores.items()
            ]
            average = sum(scores.values()) / 2
            rows.append(_row(model, "xnli-translate-train/average", "average", average, seed))
    write_cell(tmp_path / "paper-cpu-xnli", "rows", rows)
    target = _by_key(findings(tmp_path), "table5: XNLI average, fine-tuned on the target")
    want = stats.ttest_rel([0.445, 0.415], [0.355, 0.375])
    assert target.seeds == 2 and target.comparison.paired
    assert target.p_value == pytest.approx(want.pvalue)
    assert "gap per language (points, mean over seeds): ar +4.0, hi +9.0" in target.measured.detail


def test_our_measurements_carry_no_verdict_and_are_corrected_too(tmp_path) -> None:
    """Appendix A's margin over random pairs: the paper makes no claim; Δ, interval and a
    two-sided p are shown, Holm-adjusted with the rest, and no verdict is given."""
    rows = []
    for seed, gap in enumerate((0.05, 0.07, 0.06)):
        for model, margin in (("bert-tiny-ce", 0.1), ("bert-tiny-cwt", 0.1 + gap)):
            rows.append(_row(model, "synonyms", "synonym_margin", margin, seed))
    write_cell(tmp_path / "paper-cpu-encoder", "rows", rows)
    margin = _by_key(
        findings(tmp_path),
        "appendix-a: synonyms' cosine above random pairs of the same words, encoder",
    )
    want = stats.ttest_rel([0.15, 0.17, 0.16], [0.1, 0.1, 0.1]).pvalue
    assert margin.verdict is None and margin.p_value == pytest.approx(want)
    assert margin.p_adjusted >= margin.p_value and "our measurement" in margin.reason
    page = render(findings(tmp_path))
    assert "Our measurements (the paper makes no claim: no verdict):" in page


def test_the_page_lists_what_was_not_attempted_and_the_power() -> None:
    page = (ROOT / "docs" / "REPRODUCTION.md").read_text()
    assert "## Not attempted" in page and "SuperGLUE" in page and "QASPER" in page
    assert "## Power: what the seeds could see" in page
    for gone in ("direction only", "not reproduced at this scale", "(4.1B)", "989 vs 888"):
        assert gone not in page


def test_a_fine_tuned_models_run_label_names_its_causal_fine_tuning_steps() -> None:
    """The `our run` column says what we ran: the fine-tuning steps come from the rows' cell
    configuration, not from a constant."""
    from harness.paper.compare import run_label
    from harness.paper.sources import source_of

    source = source_of(next(f for f in PAPER if f.key.startswith("table3: validation")))
    cell = {"finetune_causal": True, "finetune": {"steps": 180}}
    rows = pd.DataFrame(
        [
            {**_row(m, "validation", "val_ce", 5.0, 0, 3600), "tokens_seen": 1.47e7, "config": c}
            for m, c in (("a-ce", "{}"), ("a-cwt-ft", json.dumps(cell)))
        ]
    )
    assert run_label(rows, "a-cwt-ft", source) == (
        "a-cwt-ft (3600 steps, 14.7M tokens, then 180 causal fine-tuning steps)"
    )
    assert run_label(rows, "a-ce", source) == "a-ce (3600 steps, 14.7M tokens)"
    assert "10,000 causal fine-tuning steps" in source.differs and "100 " not in source.differs
