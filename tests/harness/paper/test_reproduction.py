"""The reproduction report (`harness.paper.findings`, `harness.paper.compare`,
`harness.paper.sources`, `harness.paper.document`): every paper figure has a source, the seed
is the unit, verdicts are symmetric and follow the Holm-adjusted p, gates use the task's own
metric, and docs/REPRODUCTION.md is what `hlm report --paper` makes of the committed
leaderboards."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from harness.downstream.benchmarks import SUPERGLUE
from harness.paper.claim_rows import COLUMNS, MEASURED
from harness.paper.claims_file import declared_family, findings, paper_claims
from harness.paper.comparable import CAUSES
from harness.paper.document import HEADLINE, headline, render, write_reproduction
from harness.results.leaderboard import write_cell
from harness.results.samples import write_samples
from tests.harness.paper.rows import (
    PAPER,
    by_key,
    decoder_rows,
    duplicates_rows,
    encoder_rows,
    paper_row,
    source_of,
)

ROOT = Path(__file__).resolve().parents[3]


def test_every_figure_has_a_source_with_its_metric() -> None:
    for fig in PAPER:
        source = source_of(fig)
        assert source.unavailable or source.metric == fig.metric, fig.key
        assert "vanilla" in source.roles and len(source.roles) >= 2
        assert (ROOT / "suites" / f"{source.suite}.yaml").is_file(), source.suite


def test_verdicts_follow_the_rows(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02))
    avg = by_key(found, "table1-tokens: GLUE average")
    c = avg.comparison
    assert avg.verdict == "reproduced" and avg.seeds == 3 and c.test == "paired t-test over 3 seeds"
    assert avg.gain == pytest.approx(0.0205) and avg.interval[0] < 0.0205 < avg.interval[1]
    # Bonferroni over the scale's declared claims, whatever rows exist
    assert avg.p_adjusted == pytest.approx(min(1.0, avg.p_value * declared_family("CPU")))
    assert avg.p_value < avg.p_adjusted < 0.05 and avg.family == declared_family("CPU") == 28
    # equal time: cwt's 3000 steps take as long as ce's 2000 at the measured 1.5x
    timed = by_key(found, "table1-time: GLUE average")
    assert "equal time from the speed ratio 1.50x" in timed.measured.detail
    assert timed.measured.detail.endswith("seeds 0, 1, 2: vanilla at step 2000")
    assert timed.gain == pytest.approx(0.0205 + 0.01)
    along = by_key(found, "figure3")
    assert along.verdict == "reproduced" and "step 1000: +0.0205" in along.measured.detail
    assert along.seeds == 3  # the checkpoints of a seed are reduced to one value first
    assert by_key(found, "table1-tokens: GLUE QNLI").reason.startswith("no rows: no local")
    assert by_key(found, "table3").reason.startswith("no rows: nothing committed")
    cpu = [f for f in found if f.scale == "CPU"]
    claims = [f for f in cpu if f.figure.compared]
    assert len(cpu) == 48 and len(claims) == 28  # Table 1's tasks: details of its average
    assert {f.verdict for f in claims} <= {
        "reproduced",
        "contradicted",
        "inconclusive",
        "not comparable",
    }
    assert "At CPU scale, 28 of the paper's claims:" in headline(found)
    worse = findings(encoder_rows(tmp_path / "w", sst2_ce=0.78, gain=-0.02))
    assert by_key(worse, "table1-tokens: GLUE average").verdict == "contradicted"


def _gapped_encoder(root: Path, gaps: tuple[float, ...]) -> list:
    """The findings of a paper-cpu-encoder board whose gates pass, where bert-tiny-cwt's
    GLUE average is bert-tiny-ce's plus `gaps[seed]`, one seed per gap."""
    rows = []
    for seed, gap in enumerate(gaps):
        for model, g in (("bert-tiny-ce", 0.0), ("bert-tiny-cwt", gap)):
            rows += [
                paper_row(model, "glue/sst2", "accuracy", 0.8, seed),
                paper_row(model, "glue/sst2", "majority", 0.51, seed),
                paper_row(model, "glue/stsb", "pearson", 0.3, seed),
                paper_row(model, "glue/average", "average", 0.5 + g, seed),
            ]
    write_cell(root / "paper-cpu-encoder", "rows", rows)
    return findings(root)


def test_a_gap_that_is_not_significant_is_inconclusive_either_way(tmp_path) -> None:
    """The same weak, noisy gap in either direction: inconclusive, with the power said."""
    for sign in (1, -1):
        gaps = tuple(sign * (0.002 + noise) for noise in (0.03, -0.02, 0.0))
        found = _gapped_encoder(tmp_path / str(sign), gaps)
        avg = by_key(found, "table1-tokens: GLUE average")
        assert avg.verdict == "inconclusive", avg.reason
        # the reason speaks the row's unit (percent, as the `our Δ` column and the paper's
        # 0.86) and holds each test to the level the correction asks of it
        declared = declared_family("CPU")
        claims = {f.family for f in found if f.figure.compared and f.scale == "CPU"}
        assert claims == {declared} and avg.alpha == 0.05 / declared
        alone, held = (100 * avg.comparison.detectable(alpha=a) for a in (0.05, avg.alpha))
        assert held > alone
        assert f"3 seeds detect |Δ| ≥ {held:.3g}" in avg.reason, avg.reason
        assert f"(α = 0.05/{declared})" in avg.reason and "the paper's Δ (0.86)" in avg.reason
        # and so does the power table: a test alone, then one held to the corrected level
        assert f"| {alone:.4g} → {held:.4g} | 0.86 |" in render(found)


def test_the_headline_says_how_many_inconclusive_claims_could_have_seen_the_papers_delta(
    tmp_path,
) -> None:
    """A null result with a tight spread had the power to see the paper's Δ; one with a wide
    spread had not. The headline counts the first kind, at the corrected level."""
    for spread, powered in ((0.0001, 1), (0.03, 0)):
        found = _gapped_encoder(tmp_path / str(spread), (spread, -spread, 0.0))
        avg = by_key(found, "table1-tokens: GLUE average")
        assert avg.verdict == "inconclusive", avg.reason
        n = sum(
            f.verdict == "inconclusive" for f in found if f.figure.compared and f.scale == "CPU"
        )
        said = f"{n} inconclusive (2 the paper says headless better; {powered} of {n} had 80% power"
        assert said in headline(found)


def test_a_suites_html_section_needs_no_glue_figure(tmp_path) -> None:
    """`hlm report` of a decoder suite: its findings hold no GLUE average to lead with."""
    from harness.paper.document import render_html

    decoder = findings(tmp_path, suite="paper-cpu-decoder")
    assert decoder and {f.figure.claim for f in decoder} >= {"table3", "table4"}
    n = sum(f.figure.compared for f in decoder)
    lead = f"At CPU scale, {n} of the paper&#x27;s claims that paper-cpu-decoder compares"
    assert lead in render_html(decoder, "paper-cpu-decoder")
    assert "no main claim of the paper is compared here" not in render_html(decoder, "x")
    assert "of its 2 main claims, 2 untestable" in render_html(decoder, "paper-cpu-decoder")


def _decoder_loss_rows(tmp_path: Path, ft_loss: list[float]) -> Path:
    rows = []
    for seed, loss in enumerate(ft_loss):
        for model, ce in (("pythia-tiny-ce", 4.8 + 0.01 * seed**2), ("pythia-tiny-cwt-ft", loss)):
            rows += [
                paper_row(model, "validation", "val_ce", ce, seed),
                paper_row(model, "validation", "val_ppl", 2.718**ce, seed),
                paper_row(model, "validation", "unigram_ppl", 900.0, seed),
            ]
    write_cell(tmp_path / "paper-cpu-decoder", "rows", [{**r, "suite": "x"} for r in rows])
    return tmp_path


def test_verdicts_are_symmetric_in_the_papers_direction(tmp_path) -> None:
    """Table 3: the paper has headless+ft's validation loss worse than vanilla. Ours worse in
    every seed: reproduced; ours better in every seed: contradicted (the same test, two-sided)."""
    worse = by_key(
        findings(_decoder_loss_rows(tmp_path / "a", [5.1, 5.13, 5.12])), "table3: validation loss"
    )
    assert worse.verdict == "reproduced" and worse.p_adjusted < 0.05, worse.reason
    assert worse.gain == pytest.approx(-(5.1 + 5.13 + 5.12) / 3 + 4.8 + 5 / 300)
    assert "worse than vanilla, as the paper has it" in worse.reason
    better = by_key(
        findings(_decoder_loss_rows(tmp_path / "b", [4.5, 4.53, 4.52])), "table3: validation loss"
    )
    assert better.verdict == "contradicted" and "where the paper has it worse" in better.reason
    assert better.p_value == pytest.approx(worse.p_value, rel=0.2)


def test_the_per_example_evidence_reads_in_the_same_direction_as_the_seed_level_gap(
    tmp_path,
) -> None:
    """Validation loss: lower is better, so headless+ft's loss 0.3 above vanilla's per example
    is a Δ of -0.3 on the per-example line too, as in the `our Δ` column; its samples are
    evaluation batches, and the line says so."""
    root = _decoder_loss_rows(tmp_path, [5.1, 5.13, 5.12])
    samples = [
        {"cell_id": "c", "model": model, "sweep": "{}", "seed": 0, "step": 3000,
         "task": "validation", "metric": "val_ce", "key": str(i), "value": loss + i / 100}
        for model, loss in (("pythia-tiny-ce", 4.8), ("pythia-tiny-cwt-ft", 5.1))
        for i in range(20)
    ]  # fmt: skip
    write_samples(root / "paper-cpu-decoder", "c", samples)
    loss = by_key(findings(root), "table3: validation loss")
    assert loss.gain < 0
    why = render([loss]).split("Per-example, seed 0, test set only: ")[1]
    label = "validation loss (the paper's log-perplexity) [headless+ft] (CPU)"
    assert why.startswith(f"{label} Δ -0.3 [-0.3, -0.3]")


def test_the_same_gap_at_every_seed_asks_for_no_more_seeds(tmp_path) -> None:
    """BoolQ where both models score the same at all three seeds (above its bar, always
    answering 'yes' + 0.02): no spread, so no test, and the reason says so instead of asking
    for the seeds it has."""
    root = _decoder_loss_rows(tmp_path, [5.1, 5.13, 5.12])
    boolq = [
        paper_row(model, "lm_eval/hlm_boolq", "acc", 0.70, seed)
        for model in ("pythia-tiny-ce", "pythia-tiny-cwt-ft")
        for seed in range(3)
    ]
    write_cell(root / "paper-cpu-decoder", "boolq", [{**r, "suite": "x"} for r in boolq])
    found = by_key(findings(root), "table4: BoolQ")
    assert found.verdict == "inconclusive" and found.comparison.seeds == 3
    assert "every seed gives the same Δ" in found.reason
    assert "run at least 2 seeds" not in found.reason


def test_a_vanilla_model_at_its_majority_baseline_is_not_comparable(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.52, gain=0.02))
    avg = by_key(found, "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable" and math.isnan(avg.p_adjusted)
    assert "gate failed: the baseline bert-tiny-ce's glue/sst2 accuracy 0.5205" in avg.reason
    assert "needs at least majority + 0.05 = 0.560" in avg.reason
    assert "of its 7 main claims, 7 untestable" in headline(found)
    # not tested: its row says which gate, and the power table (inconclusive claims) omits it
    page = render(found)
    assert "gate: bert-tiny-ce misses glue/sst2 accuracy 0.5205 < 0.56" in page
    assert "No claim passed its gates." in page.split("## Power: what the seeds could see")[1]


def test_gates_use_the_tasks_own_metric(tmp_path) -> None:
    """MRPC is gated on F1 against the F1 of always answering the majority class, not on
    accuracy: balanced fine-tuning trades accuracy for the minority class's recall."""
    root = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    rows = [
        paper_row(model, "glue/mrpc", metric, value, seed)
        for seed in range(3)
        for model in ("bert-tiny-ce", "bert-tiny-cwt")
        for metric, value in (("accuracy", 0.62), ("f1", 0.85), ("majority", 0.684))
    ]
    write_cell(root / "paper-cpu-encoder", "mrpc", rows)
    mrpc = by_key(findings(root), "table1-tokens: GLUE MRPC")
    assert mrpc.verdict != "not comparable", mrpc.reason  # accuracy under the majority share
    assert any("glue/mrpc f1 0.85" in g.text and g.passed for g in mrpc.gates)


def _decoder_board(root: Path, unigram: float, acc: float = 0.05) -> list:
    """The findings of `decoder_rows`' board (its models answering `acc` of LAMBADA)."""
    return findings(decoder_rows(root, unigram, acc))


def test_lambada_perplexity_is_gated_on_the_unigram_model_and_on_accuracy(tmp_path) -> None:
    """LAMBADA's perplexity is compared once it is at most half the unigram model's and the
    model answers some targets: a model with 0 % accuracy cannot predict the target, however
    far its perplexity lies under token frequencies'. It is compared as a log ratio."""
    broken = by_key(_decoder_board(tmp_path / "zero", 2e7, acc=0.0), "table3: LAMBADA perp")
    assert broken.verdict == "not comparable" and "hlm_lambada acc 0 (needs" in broken.reason
    found = _decoder_board(tmp_path / "above", unigram=2e7)
    ppl = by_key(found, "table3: LAMBADA perplexity")
    assert ppl.verdict == "reproduced", ppl.reason  # the paper's headless is worse too
    assert ppl.gain == pytest.approx(-np.mean(np.log([4e6 / 2e6, 4.1e6 / 2e6, 4.2e6 / 2e6])))
    assert any(
        "perplexity 2e+06 (needs at most 0.5 x unigram_ppl = 1e+07)" in g.text and g.passed
        for g in ppl.gates
    ), [g.text for g in ppl.gates]
    acc = by_key(found, "table3: LAMBADA accuracy")  # both arms at 0.05 at every seed: no test
    assert acc.verdict == "inconclusive" and "no test as run" in acc.reason
    near = by_key(_decoder_board(tmp_path / "near", unigram=3e6), "table3: LAMBADA perplexity")
    assert near.verdict == "not comparable"
    assert "perplexity 2e+06 (needs at most 0.5 x unigram_ppl = 1.5e+06)" in near.reason
    # a model with no rows (the fine-tuned one, here) is named, with what computes it
    tuned = next(
        f for f in found if f.figure.key.startswith("table3: LAMBADA perp") and f.role != "headless"
    )
    assert tuned.blocked == "not run" and tuned.reason == (
        "no rows: the headless+ft model pythia-tiny-cwt-ft has no lm_eval/hlm_lambada rows in "
        "leaderboards/paper-cpu-decoder (`hlm run paper-cpu-decoder --model pythia-tiny-cwt-ft`)"
    )


def test_the_readme_headline_is_rewritten_between_its_markers(tmp_path) -> None:
    root = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    readme = tmp_path / "README.md"
    readme.write_text(
        "a\n<!-- reproduction-headline -->\nold\n<!-- /reproduction-headline -->\nb\n"
    )
    doc = tmp_path / "docs" / "REPRODUCTION.md"
    plots = root / "paper-cpu-encoder" / "_plots"
    plots.mkdir(parents=True)
    (plots / "curves-glue_average-average.png").write_bytes(b"")
    (plots / "bars-synonyms.png").write_bytes(b"")  # a task no GLUE finding reads
    figures = [doc.parent / "figures" / name for name in ("verdicts.svg", "gates.svg")]
    companion = doc.parent / "REPRODUCTION-baselines.md"
    assert write_reproduction(root, doc, readme) == [doc, companion, *figures, readme]
    text = readme.read_text()
    assert "old" not in text and "24.0" not in text and "reproduced" in text
    assert doc.read_text() == render(findings(root), root)
    table1 = doc.read_text().split("## Table 1: GLUE at equal tokens")[1].split("##")[0]
    # one link to the suite's plots, counting those of the tasks the section reads
    assert "Plots: [paper-cpu-encoder: 1](../leaderboards/paper-cpu-encoder/_plots/)." in table1


def _rounded(svg: str) -> str:
    """An SVG with every number to one decimal: a last-digit difference in a layout float
    between machines is not a change of the figure."""
    return re.sub(r"-?\d+\.\d+", lambda m: f"{float(m.group()):.1f}", svg)


def test_reproduction_doc_is_generated_from_the_committed_leaderboards(tmp_path) -> None:
    """docs/REPRODUCTION.md, its figures and the README headline: `hlm report --paper`
    output, unedited."""
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    doc = tmp_path / "REPRODUCTION.md"
    write_reproduction(ROOT / "leaderboards", doc, tmp_path / "README.md")
    assert doc.read_text() == (ROOT / "docs" / "REPRODUCTION.md").read_text()
    companion = "REPRODUCTION-baselines.md"
    assert (tmp_path / companion).read_text() == (ROOT / "docs" / companion).read_text()
    for name in ("verdicts.svg", "gates.svg"):
        drawn, committed = (d / "figures" / name for d in (tmp_path, ROOT / "docs"))
        assert _rounded(drawn.read_text()) == _rounded(committed.read_text()), name
    match = HEADLINE.search((ROOT / "README.md").read_text())
    assert match is not None, "README.md lacks the reproduction-headline markers"
    assert (tmp_path / "README.md").read_text() == (ROOT / "README.md").read_text()


def test_the_committed_page_reads_in_a_minute() -> None:
    """docs/REPRODUCTION.md opens with the main claims, stays under 6,000 words, and no
    claim's why cell runs past 40 words (what rows share is said once, under the table)."""
    page = (ROOT / "docs" / "REPRODUCTION.md").read_text()
    assert len(page.split()) < 6000
    assert page.split("\n## ")[1].startswith("The main claims")
    headers = ("| " + " | ".join(COLUMNS) + " |", "| " + " | ".join(MEASURED) + " |")
    rows = [
        line
        for header in headers
        for table in page.split(header)[1:]
        for line in table.split("\n\n")[0].splitlines()[1:]
    ]
    assert len(rows) > 20
    for line in rows:
        why = line.strip().strip("|").split(" | ")[-1]
        assert len(why.split()) <= 40, why


def test_hlm_report_paper_out_writes_only_the_page(tmp_path, monkeypatch, capsys) -> None:
    from harness.cli import main as hlm

    root = encoder_rows(tmp_path / "lb", sst2_ce=0.78, gain=0.02)
    readme = tmp_path / "README.md"
    original = "a\n<!-- reproduction-headline -->\nold\n<!-- /reproduction-headline -->\n"
    readme.write_text(original)
    monkeypatch.chdir(tmp_path)
    assert hlm(["report", "--paper", "--output-dir", "copy", "--leaderboards", str(root)]) == 0
    copy = tmp_path / "copy" / "REPRODUCTION.md"
    assert readme.read_text() == original and "reproduced" in copy.read_text()
    # the project's page and headline come from leaderboards/, which the page says it reads
    assert hlm(["report", "--paper", "--leaderboards", str(root)]) == 2
    said = capsys.readouterr().err
    assert "docs/REPRODUCTION.md and the README's headline are made from leaderboards/" in said
    assert f"for a page of {root}, give --output-dir DIR" in said
    page_there = ["--output-dir", "docs", "--leaderboards", str(root)]
    assert hlm(["report", "--paper", *page_there]) == 2
    assert f"for a page of {root}, give --output-dir DIR" in capsys.readouterr().err  # same page
    assert readme.read_text() == original and not (tmp_path / "docs").exists()
    root.rename(tmp_path / "leaderboards")
    assert hlm(["report", "--paper"]) == 0  # the project's page
    assert "old" not in readme.read_text() and (tmp_path / "docs/REPRODUCTION.md").is_file()


def test_a_result_file_that_does_not_read_stops_the_page(tmp_path, monkeypatch, capsys) -> None:
    """The committed page would hold fewer seeds than the folder: refused, naming the file,
    and the page already written is left as it was."""
    from harness.cli import main as hlm

    root = encoder_rows(tmp_path / "leaderboards", sst2_ce=0.78, gain=0.02)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("a\n")
    assert hlm(["report", "--paper", "-q"]) == 0
    page = (tmp_path / "docs/REPRODUCTION.md").read_text()
    victim = sorted((root / "paper-cpu-encoder").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:50])
    assert hlm(["report", "--paper", "-q"]) == 2
    said = capsys.readouterr().err
    assert f"1 result file(s) do not read: leaderboards/paper-cpu-encoder/{victim.name}" in said
    assert "`hlm run` of the suite computes their cells again" in said
    assert (tmp_path / "docs/REPRODUCTION.md").read_text() == page


def _figure2(root: Path, speedups: dict[int, tuple[float, ...]]) -> object:
    """Figure 2's speed finding from side-by-side measurements: `speedups[batch]`, one
    measurement each (seeds 0, 1, ...)."""
    rows = []
    for batch, values in speedups.items():
        for seed, speedup in enumerate(values):
            for model, value in (("bert-small-ce", 1.0), ("bert-small-cwt", speedup)):
                r = paper_row(model, "throughput", "speedup_vs_baseline", value, seed)
                rows.append({**r, "sweep": json.dumps({"batch_size": batch})})
    write_cell(root / "paper-cpu-throughput", "rows", rows)
    return by_key(findings(root), "figure2: training speed")


def test_figure2_is_judged_at_every_batch_size_on_ratios_measured_side_by_side(tmp_path) -> None:
    """Figure 2: the speed ratio of each batch size as the throughput task measured it,
    vanilla and headless alternating (never step times of separate runs divided). The paper
    says "for all batch sizes": each size is tested, and the weakest stands for the claim."""
    sizes = {8: (1.38, 1.3801), 16: (1.51, 1.5101), 32: (1.39, 1.3901), 64: (1.49, 1.4901)}
    fig2 = _figure2(tmp_path / "two", sizes)
    assert fig2.gain == pytest.approx(0.38005)  # batch size 8, the weakest
    assert fig2.comparison.test.startswith("every point tested on its own; the weakest (batch")
    assert "batch_size 8: +0.38, batch_size 16: +0.51" in fig2.measured.detail
    assert fig2.verdict == "reproduced", fig2.reason
    # one measurement per batch size, however many sizes: no test of "at every size"
    once = _figure2(tmp_path / "once", {b: v[:1] for b, v in sizes.items()})
    assert once.verdict == "inconclusive" and once.reason.startswith("no test as run")


def test_the_power_of_side_by_side_measurements_counts_measurements(tmp_path) -> None:
    """No pretraining seed is involved in a speed ratio: the power the reason states counts
    the side-by-side measurements, in those words."""
    sizes = {8: (1.1, 1.3), 16: (0.95, 1.2), 32: (1.3, 1.1), 64: (0.9, 1.25)}
    fig2 = _figure2(tmp_path, sizes)
    assert fig2.verdict == "inconclusive", fig2.reason
    assert "2 side-by-side measurements detect |Δ| ≥" in fig2.reason
    assert "seeds detect" not in fig2.reason


def test_a_speed_ratio_measured_once_per_seed_counts_measurements(tmp_path) -> None:
    """Table 6's throughput: one side-by-side measurement in each seed's cell (a process of
    its own, no pretraining). The test and the power count measurements, not seeds."""
    rows = [
        paper_row(model, "throughput", "speedup_vs_baseline", value, seed)
        for seed, speedup in enumerate((1.17, 1.03, 1.10))
        for model, value in (("bert-tiny-ce", 1.0), ("bert-tiny-cwt", speedup))
    ]
    write_cell(tmp_path / "paper-cpu-ablation", "rows", rows)
    cwt = by_key(findings(tmp_path), "table6: throughput relative to ce, cwt")
    assert cwt.comparison.test == "paired t-test over 3 side-by-side measurements"
    assert cwt.gain == pytest.approx(0.1, abs=1e-9)
    assert "3 side-by-side measurements detect |Δ| ≥" in cwt.reason, cwt.reason
    assert "seeds" not in cwt.reason
    # inconclusive, yet its interval [-0.07, 0.27] stops short of the paper's 1.13: said so
    low, high = cwt.interval
    assert cwt.verdict == "inconclusive" and low < 0 < high < 1.13
    level = f"{100 * cwt.level:.3g} %"  # the corrected level, as the verdict's
    assert f"the {level} interval [{low:.3g}, {high:.3g}] stops short of the paper's Δ (1.13)" in (
        cwt.reason
    )


def test_an_interval_that_reaches_the_papers_delta_or_lies_opposite_is_not_short_of_it(
    tmp_path,
) -> None:
    """Only an interval that reaches into the paper's direction and ends before its Δ is
    'short of' it: one that covers the Δ is not. Drawn at the corrected level, the interval of
    an inconclusive claim always covers 0, and that of a contradicted one lies opposite."""
    noisy = {"bert-tiny-nce": (1.5, 0.6, 1.2), "bert-tiny-ce-cwt": (1.4, 0.7, 0.9)}
    for name, speedups in (("covers", (1.5, 2.9, 2.2)), ("opposite", (0.8, 0.65, 0.75))):
        arms = {"bert-tiny-ce": (1.0, 1.0, 1.0), "bert-tiny-cwt": speedups, **noisy}
        rows = [
            paper_row(model, "throughput", "speedup_vs_baseline", values[seed], seed)
            for model, values in arms.items()
            for seed in range(3)
        ]
        write_cell(tmp_path / name / "paper-cpu-ablation", "rows", rows)
        cwt = by_key(findings(tmp_path / name), "table6: throughput relative to ce, cwt")
        low, high = cwt.interval
        assert cwt.verdict == "inconclusive" and low < 0 < high, (name, cwt.reason)
        if name == "covers":
            assert "stops short" not in cwt.reason and high > 1.13, cwt.reason


def test_a_seed_only_one_model_has_yet_is_left_out(tmp_path) -> None:
    """A run in progress: vanilla's seed 3 is in, headless's is not. The comparison stays on
    the seeds both have (the extra seed's very low average would otherwise count)."""
    root = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    extra = [
        paper_row("bert-tiny-ce", "glue/average", "average", 0.1, 3, step) for step in (1000, 3000)
    ]
    write_cell(root / "paper-cpu-encoder", "extra", extra)
    avg = by_key(findings(root), "table1-tokens: GLUE average")
    assert avg.seeds == 3 and avg.gain == pytest.approx(0.0205)


def test_each_xnli_set_up_needs_its_own_vanilla_above_chance(tmp_path) -> None:
    """Table 5: translate-train above chance says nothing of zero-shot transfer at chance."""
    scores = {"translate-train": (0.40, 0.43), "zero-shot": (0.34, 0.36)}
    rows = [
        paper_row(model, f"xnli-{mode}/average", "average", value, seed=0)
        for mode, pair in scores.items()
        for model, value in zip(("bert-tiny-ce", "bert-tiny-cwt"), pair, strict=True)
    ]
    write_cell(tmp_path / "paper-cpu-xnli", "rows", rows)
    found = findings(tmp_path)
    target = by_key(found, "table5: XNLI average, fine-tuned on the target language")
    assert target.verdict == "inconclusive" and target.gain == pytest.approx(0.03)
    assert "no seed-level spread" in target.reason  # one seed: no test, and it says so
    english = by_key(found, "table5: XNLI average, fine-tuned on English only")
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
                paper_row(model, f"xnli-translate-train/{lang}", "accuracy", v, seed)
                for lang, v in scores.items()
            ]
            average = sum(scores.values()) / 2
            rows.append(paper_row(model, "xnli-translate-train/average", "average", average, seed))
    write_cell(tmp_path / "paper-cpu-xnli", "rows", rows)
    target = by_key(findings(tmp_path), "table5: XNLI average, fine-tuned on the target")
    want = stats.ttest_rel([0.445, 0.415], [0.355, 0.375])
    assert target.seeds == 2 and target.comparison.paired
    assert target.p_value == pytest.approx(want.pvalue)
    assert "gap per language (points, mean over seeds): ar +4.0, hi +9.0" in target.measured.detail


def test_our_measurements_carry_no_verdict_and_stay_out_of_the_family(tmp_path) -> None:
    """Appendix A's margin over random pairs: the paper makes no claim; Δ, 95 % interval and
    a raw two-sided p are shown, no verdict is given, and it neither adjusts the claims' p
    nor is adjusted."""
    rows = []
    for seed, gap in enumerate((0.05, 0.07, 0.06)):
        for model, margin in (("bert-tiny-ce", 0.1), ("bert-tiny-cwt", 0.1 + gap)):
            rows.append(paper_row(model, "synonyms", "synonym_margin", margin, seed))
    write_cell(tmp_path / "paper-cpu-encoder", "rows", rows)
    margin = by_key(
        findings(tmp_path),
        "appendix-a: synonyms' cosine above random pairs of the same words, encoder",
    )
    want = stats.ttest_rel([0.15, 0.17, 0.16], [0.1, 0.1, 0.1]).pvalue
    assert margin.verdict is None and margin.p_value == pytest.approx(want)
    assert margin.p_adjusted == margin.p_value and margin.family == 1
    assert margin.level == 0.95 and margin.reason.startswith("exploratory")
    page = render(findings(tmp_path))
    assert "Exploratory rows (no claim, no verdict):" in page


def test_our_measurement_whose_baseline_fails_a_gate_is_not_tested_and_names_it(
    tmp_path,
) -> None:
    """CWT's duplicate targets masked against kept: the baseline is the paper's variant
    (bert-tiny-cwt), not a vanilla model. Where its SST-2 fails the gate, the row makes no
    test (no p, no adjusted p of nan) and the reason names the model whose score it read."""
    found = findings(duplicates_rows(tmp_path, sst2=0.52))
    masked = by_key(found, "duplicates: CWT duplicate targets masked")
    assert masked.verdict is None and masked.gate_failed and math.isnan(masked.p_adjusted)
    assert masked.reason.startswith("gate failed: the baseline bert-tiny-cwt's glue/sst2")
    line = next(x for x in render(found).splitlines() if "duplicate targets masked" in x)
    assert "| - | bert-tiny-cwt misses glue/sst2 |" in line
    assert "nan" not in line


def test_the_page_lists_what_was_not_attempted_and_the_power() -> None:
    page = (ROOT / "docs" / "REPRODUCTION.md").read_text()
    assert "## Not attempted" in page and "SuperGLUE" in page and "QASPER" in page
    assert "## Power: what the seeds could see" in page
    for gone in ("direction only", "not reproduced at this scale", "(4.1B)", "989 vs 888"):
        assert gone not in page


def test_what_was_not_attempted_says_what_the_data_root_holds(data_root: Path) -> None:
    """Table 2's reason: SuperGLUE's dev sets are here, its train sets only as FewGLUE's 32
    examples, which is what the task reads locally; Table 4's: no RACE, SciQ or QASPER."""
    why = {n.source: n.why for n in paper_claims().not_attempted}
    assert "FewGLUE's 32-example" in why["Table 2"] and "`source: hub`" in why["Table 2"]
    for task in SUPERGLUE.values():  # Table 2's four tasks
        assert task.local_train is not None and task.local_eval is not None
        (train,), (dev,) = task.local_train.files, task.local_eval.files
        assert train.endswith("train_fewglue32.jsonl") and (data_root / train).is_file()
        assert (data_root / dev).is_file()
        assert len((data_root / train).read_text().splitlines()) == 32
        assert not list((data_root / train).parent.glob("train.*"))  # no full train set
    assert "no local data" in why["Table 4"]
    held = {p.name.lower() for p in data_root.iterdir()}
    assert not held & {"race", "sciq", "qasper"}


def test_appendix_a_states_the_papers_delta_so_its_power_is_stated() -> None:
    """The paper gives Appendix A's synonyms' cosine as differences only ("1.4 points higher
    for the encoder, roughly 7 for both decoders"): they are its Δ, in cosine units, for the
    power table and the `paper Δ` column."""
    synonyms = [f for f in PAPER if f.metric == "synonym_cosine"]
    assert {(f.quantity.rsplit(", ", 1)[1], f.paper_gain()) for f in synonyms} == {
        ("encoder", 0.014),
        ("decoder", 0.07),
    }
    decoder = next(f for f in synonyms if f.quantity.endswith("decoder"))
    assert decoder.paper_gain("headless+ft") == 0.07 and decoder.values == {}


def test_a_baseline_whose_seeds_straddle_the_bar_is_not_comparable(tmp_path) -> None:
    """The vanilla model's SST-2 mean clears its bar (majority + 0.05 = 0.56) but its seeds
    spread across it: the gate is decided on the mean with its interval, so it fails, and
    the row says the interval reaches past the bar."""
    rows = []
    for seed, sst2 in enumerate((0.50, 0.57, 0.66)):  # mean 0.577, interval far below 0.56
        for model, gain in (("bert-tiny-ce", 0.0), ("bert-tiny-cwt", 0.02)):
            rows += [
                paper_row(model, "glue/sst2", "accuracy", sst2 + gain, seed),
                paper_row(model, "glue/sst2", "majority", 0.51, seed),
                paper_row(model, "glue/stsb", "pearson", 0.5, seed),
                paper_row(model, "glue/average", "average", 0.5 + gain, seed),
            ]
    write_cell(tmp_path / "paper-cpu-encoder", "rows", rows)
    avg = by_key(findings(tmp_path), "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable" and "reaches past the bar" in avg.reason
    sst2 = next(g for g in avg.gates if g.name == "glue/sst2 accuracy")
    assert sst2.value > sst2.bar and sst2.interval is not None and sst2.interval[0] < sst2.bar
    assert "glue/sst2 accuracy 0.5767, its interval to " in render(findings(tmp_path))


@pytest.mark.parametrize("linked", ["docs", "docs/figures"])
def test_the_page_is_never_written_through_a_linked_folder(tmp_path, linked: str) -> None:
    from zoo.writer import WriteRefused

    root = encoder_rows(tmp_path / "lb", sst2_ce=0.78, gain=0.02)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "docs").mkdir(exist_ok=linked == "docs/figures")
    if linked == "docs":
        (tmp_path / "docs").rmdir()
    (tmp_path / linked).symlink_to(elsewhere)
    with pytest.raises(WriteRefused, match="is a link"):
        write_reproduction(root, tmp_path / "docs" / "REPRODUCTION.md", None)
    assert not list(elsewhere.iterdir())


def test_the_page_never_lands_among_the_rows_it_reads(tmp_path) -> None:
    from zoo.writer import WriteRefused

    root = encoder_rows(tmp_path / "lb", sst2_ce=0.78, gain=0.02)
    board = next(d for d in root.iterdir() if d.is_dir())
    with pytest.raises(WriteRefused, match=f"lies inside, or holds, the leaderboard {board.name}"):
        write_reproduction(root, board / "site" / "REPRODUCTION.md", None)


def test_a_missing_arm_is_not_run_never_a_failed_gate(tmp_path) -> None:
    """Only the vanilla arm ran, and its gates fail: the claim is "not run" (what to run is
    named), not "baseline fails a gate"."""
    found = findings(encoder_rows(tmp_path, sst2_ce=0.52, gain=0.0, arms=("ce",)))
    avg = by_key(found, "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable" and avg.blocked == "not run"
    assert "the headless model bert-tiny-cwt has no glue/average rows" in avg.reason
    assert "--model bert-tiny-cwt" in avg.reason and "gate" not in avg.reason
    assert avg.gates and not all(g.passed for g in avg.gates)  # read, for the baselines' page


def test_the_headline_splits_each_verdict_by_the_papers_direction(tmp_path) -> None:
    found = findings(encoder_rows(tmp_path, sst2_ce=0.8, gain=0.05))
    said = headline(found)
    assert "reproduced (" in said and "headless better" in said and "as the paper says" in said
    reproduced = [f for f in found if f.scale == "CPU" and f.verdict == "reproduced"]
    better = sum(f.figure.paper_direction(f.role) == "better" for f in reproduced)
    assert f"{len(reproduced)} reproduced ({better} headless better" in said
    blocked = [f for f in found if f.scale == "CPU" and f.verdict == "not comparable"]
    kinds = Counter(f.blocked for f in blocked)
    assert f"{len(blocked)} not comparable (" in said and kinds["not run"] > 0
    cpu = said.split("At CPU, ")[0]  # the CPU scale's sentence
    for kind, n in kinds.items():
        assert f"{n} {CAUSES[kind]}" in cpu, (kind, cpu)


def test_paper_claims_declared_after_their_rows_are_exploratory_on_the_page(tmp_path) -> None:
    """Rows stamped before suites/claims/paper.yaml was committed (as the committed CPU rows
    are): every claim is judged exploratory, whatever the file says, and the page says when
    each was declared."""
    early = datetime(2026, 1, 1, tzinfo=UTC)
    found = findings(encoder_rows(tmp_path, sst2_ce=0.8, gain=0.05, timestamp=early))
    avg = by_key(found, "table1-tokens: GLUE average")
    assert avg.late and avg.verdict is None and avg.figure.compared is False
    assert avg.reason.startswith("exploratory: declared ")
    assert "not before its first row (2026-01-01 00:00 UTC)" in avg.reason
    assert "exploratory, declared after their rows" in headline(found)
    assert not any(f.verdict in ("reproduced", "contradicted") for f in found)
