"""The reproduction report (`harness.paper.findings`, `harness.paper.sources`,
`harness.paper.document`): every paper figure has a source, verdicts follow the rows and
the sanity bars, and docs/REPRODUCTION.md is what `hlm report --paper` makes of the
committed leaderboards."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scipy import stats

from harness.paper.document import HEADLINE, headline, render, write_reproduction
from harness.paper.figures import PAPER
from harness.paper.findings import findings
from harness.paper.sources import CPU, GPU, source_of
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
    tmp: Path, sst2_ce: float, gain: float, suite: str = "paper-cpu-encoder", **columns: str
) -> Path:
    """3 seeds of ce and cwt at steps 1000-3000: cwt better by `gain` (+0.002 x seed) on the
    average (bert-tiny, or bert-small in a paper-gpu suite)."""
    preset = "bert-small" if "gpu" in suite else "bert-tiny"
    rows = []
    for seed in range(3):
        noise = 0.002 * seed
        for step in (1000, 2000, 3000):
            for model, g in ((f"{preset}-ce", 0.0), (f"{preset}-cwt", gain + noise)):
                rows += [
                    _row(model, "glue/sst2", "accuracy", sst2_ce + g + noise, seed, step),
                    _row(model, "glue/sst2", "majority", 0.51, seed, step),
                    _row(model, "glue/stsb", "spearman", 0.3 + g, seed, step),
                    _row(model, "glue/stsb", "majority", 0.0, seed, step),
                    _row(
                        model, "glue/average", "average", 0.5 + g + noise + step / 1e5, seed, step
                    ),
                ]
    write_cell(tmp / suite, "rows", [{**r, **columns} for r in rows])
    return tmp


def _by_key(found, key: str):
    return next(f for f in found if f.figure.key.startswith(key))


def test_verdicts_follow_the_rows(tmp_path) -> None:
    found = findings(_encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    avg = _by_key(found, "table1-tokens: GLUE average")
    assert avg.verdict == "reproduced" and avg.seeds == 3 and avg.p_value < 0.05
    assert avg.gain == pytest.approx(0.022)
    # equal time: cwt's 3000 steps (300 s) beside ce's checkpoint nearest in seconds (2000: 300 s)
    timed = _by_key(found, "table1-time: GLUE average")
    assert "vanilla step 2000 (300 s) vs step 3000 (300 s)" in timed.detail
    assert timed.gain == pytest.approx(0.022 + 0.01)
    along = _by_key(found, "figure3")
    assert along.verdict == "reproduced" and "step 1000: +0.022" in along.detail
    assert _by_key(found, "table1-tokens: GLUE QNLI").reason.startswith("no local train set")
    assert _by_key(found, "table3").reason.startswith("no committed rows")
    cpu = [f for f in found if f.scale == "CPU"]
    assert len(cpu) == 48 and "over all 42 figures of the paper" in headline(found)  # 6 ours
    worse = findings(_encoder_rows(tmp_path / "w", sst2_ce=0.78, gain=-0.02))
    assert _by_key(worse, "table1-tokens: GLUE average").verdict == "not reproduced at this scale"


def test_the_gpu_scale_compares_the_encoder_and_decoder_figures_a_size_up() -> None:
    for fig in PAPER:
        cpu, gpu = CPU.source(fig), GPU.source(fig)
        assert cpu == source_of(fig)
        if cpu.suite not in ("paper-cpu-encoder", "paper-cpu-decoder"):
            assert gpu is None, fig.key  # the sweeps, XNLI, the ablation: CPU only
            continue
        assert gpu is not None and gpu.suite == cpu.suite.replace("-cpu-", "-gpu-")
        assert (gpu.task, gpu.metric, gpu.at, gpu.gates) == (
            cpu.task,
            cpu.metric,
            cpu.at,
            cpu.gates,
        )
        trained = {m.label() for m in load_suite(ROOT / "suites" / f"{gpu.suite}.yaml").models}
        assert set(gpu.roles.values()) <= trained, fig.key
        assert all(m.startswith(("bert-small-", "gpt2-11m-")) for m in gpu.roles.values())


def test_gpu_rows_get_their_own_section_labelled_with_the_gpu(tmp_path) -> None:
    pending = render(findings(_encoder_rows(tmp_path / "cpu", sst2_ce=0.78, gain=0.02)))
    assert pending.endswith(GPU.pending + "\n")  # nothing run at GPU scale yet
    h100 = "cuda x1: NVIDIA H100 80GB HBM3"
    root = _encoder_rows(tmp_path / "gpu", 0.78, -0.03, "paper-gpu-encoder", hardware=h100)
    _encoder_rows(root, sst2_ce=0.78, gain=0.02)  # the CPU part beside it
    found = findings(root)
    gpu = _by_key([f for f in found if f.scale == "GPU"], "table1-tokens: GLUE average")
    assert gpu.source.roles == {"vanilla": "bert-small-ce", "headless": "bert-small-cwt"}
    assert gpu.verdict == "not reproduced at this scale"
    assert _by_key(found, "table1-tokens: GLUE average").verdict == "reproduced"  # CPU's
    text = headline(found)
    assert text.startswith("At CPU scale, the headless bert-tiny's GLUE average")
    assert (
        "At GPU scale, the headless bert-small's GLUE average at equal tokens is 50.4 against"
        in text
    )
    page = render(found, root).split("## At GPU scale: bert-small and gpt2-11m")[1]
    assert f"`paper-gpu-encoder` (`hlm run paper-gpu-encoder`); trained on {h100}." in page
    assert (
        "bert-small-cwt vs bert-small-ce" in page and "| not reproduced at this scale | 7 |" in page
    )


def test_a_suites_html_section_needs_no_glue_figure(tmp_path) -> None:
    """`hlm report` of a decoder suite: its findings hold no GLUE average to lead with."""
    from harness.paper.document import render_html

    decoder = findings(tmp_path, suite="paper-cpu-decoder")
    assert decoder and {f.figure.claim for f in decoder} >= {"table3", "table4"}
    n = sum(f.figure.compared for f in decoder)
    lead = f"At CPU scale, over the {n} figures of the paper that paper-cpu-decoder compares: "
    assert lead in render_html(decoder, "paper-cpu-decoder")


def test_p_values_are_one_tailed_in_the_papers_direction(tmp_path) -> None:
    """Table 3: the paper has headless+ft's validation loss worse than vanilla; ours is
    worse in every seed, so that direction is significant (a small p, not 1 - p)."""
    rows = []
    for seed in range(3):
        for model, ce in (("pythia-tiny-ce", 4.8), ("pythia-tiny-cwt-ft", 5.1 + 0.01 * seed)):
            rows += [
                _row(model, "validation", "val_ce", ce, seed),
                _row(model, "validation", "val_ppl", 2.718**ce, seed),
                _row(model, "validation", "unigram_ppl", 900.0, seed),
            ]
    write_cell(tmp_path / "paper-cpu-decoder", "rows", [{**r, "suite": "x"} for r in rows])
    loss = _by_key(findings(tmp_path), "table3: validation loss")
    assert loss.verdict == "reproduced" and loss.p_value < 0.001, loss
    assert loss.gain == pytest.approx(-0.31) and "as the paper has it worse" in loss.reason


def test_a_vanilla_model_at_its_majority_baseline_is_not_comparable(tmp_path) -> None:
    found = findings(_encoder_rows(tmp_path, sst2_ce=0.52, gain=0.02))
    avg = _by_key(found, "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable"
    assert "glue/sst2 accuracy 0.522 vs majority 0.510" in avg.reason
    assert "says nothing yet: the vanilla model does not clear" in headline(found)


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


def test_a_latency_sweep_is_judged_on_its_relative_cut(tmp_path) -> None:
    """Figure 2: step times differ tenfold across batch sizes; the gain is the share of
    vanilla's latency cut at each batch size (25% and 30% here), not milliseconds."""
    rows = []
    for batch, ms, cut in ((8, 100.0, 0.25), (16, 210.0, 0.30), (64, 1000.0, 0.25)):
        for model, value in (("bert-small-ce", ms), ("bert-small-cwt", ms * (1 - cut))):
            r = _row(model, "throughput", "step_ms", value, 0)
            rows.append({**r, "sweep": json.dumps({"batch_size": batch})})
    write_cell(tmp_path / "paper-cpu-throughput", "rows", rows)
    fig2 = _by_key(findings(tmp_path), "figure2")
    assert fig2.gain == pytest.approx((0.25 + 0.30 + 0.25) / 3)
    assert "batch_size 8: +25.0%, batch_size 16: +30.0%, batch_size 64: +25.0%" in fig2.detail
    assert fig2.verdict == "reproduced"
    assert "by 26.7%" in fig2.reason


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
    assert target.verdict == "direction only" and target.gain == pytest.approx(0.03)
    english = _by_key(found, "table5: XNLI average, fine-tuned on English only")
    assert english.verdict == "not comparable"
    assert "xnli-zero-shot/average average 0.340 vs chance (1/3) 0.333" in english.reason


def test_one_seed_of_xnli_is_tested_over_its_languages(tmp_path) -> None:
    """Table 5 at one seed, no kept samples: the languages, each fine-tuned on its own, pair
    up (scipy's paired t-test, one-tailed); each language's gap is shown."""
    ce = {"ar": 0.38, "de": 0.39, "en": 0.43, "hi": 0.33}
    cwt = {"ar": 0.45, "de": 0.41, "en": 0.42, "hi": 0.44}
    rows = [
        _row(model, f"xnli-translate-train/{lang}", "accuracy", value, seed=0)
        for model, scores in (("bert-tiny-ce", ce), ("bert-tiny-cwt", cwt))
        for lang, value in scores.items()
    ]
    rows += [
        _row(m, "xnli-translate-train/average", "average", sum(s.values()) / 4, seed=0)
        for m, s in (("bert-tiny-ce", ce), ("bert-tiny-cwt", cwt))
    ]
    write_cell(tmp_path / "paper-cpu-xnli", "rows", rows)
    target = _by_key(findings(tmp_path), "table5: XNLI average, fine-tuned on the target")
    want = stats.ttest_rel(list(cwt.values()), list(ce.values()), alternative="greater")
    assert target.test == "paired t-test over 4 languages"
    assert target.p_value == pytest.approx(want.pvalue)
    assert "gap per language (points): ar +7.0, de +2.0, en -1.0, hi +11.0" in target.detail


def test_seeds_of_xnli_are_tested_over_seeds_with_each_languages_mean_gap(tmp_path) -> None:
    """Table 5 at two seeds: Welch over the seeds' averages; the detail keeps each language's
    gap, averaged over the seeds both models have (vanilla's seed 2 alone is left out)."""
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
    want = stats.ttest_ind([0.445, 0.415], [0.355, 0.375], equal_var=False, alternative="greater")
    assert target.seeds == 2 and target.p_value == pytest.approx(want.pvalue)
    assert "gap per language (points, mean over seeds): ar +4.0, hi +9.0" in target.detail


def test_our_measurements_get_a_two_sided_p(tmp_path) -> None:
    """Figure 7's validation loss: the paper makes no claim, so no direction is tested; a
    gap of one sign at every batch size is significant either way (paired t, two-sided)."""
    gaps = {8: 0.66, 16: 0.55, 32: 0.47}
    rows = []
    for batch, gap in gaps.items():
        for model, loss in (("pythia-tiny-ce", 5.0), ("pythia-tiny-cwt-ft", 5.0 + gap)):
            point = {"sweep": json.dumps({"batch_size": batch})}
            rows += [
                {**_row(model, "validation", "val_ce", loss, 0), **point},
                {**_row(model, "validation", "val_ppl", 2.718**loss, 0), **point},
                {**_row(model, "validation", "unigram_ppl", 900.0, 0), **point},
            ]
    write_cell(tmp_path / "paper-cpu-batch", "rows", rows)
    loss = _by_key(findings(tmp_path), "figure7: batch sweep: validation loss")
    want = stats.ttest_1samp([-g for g in gaps.values()], 0.0).pvalue
    assert loss.test.endswith(", two-sided") and loss.p_value == pytest.approx(want)
    assert loss.verdict == "not comparable" and "our measurement" in loss.reason
