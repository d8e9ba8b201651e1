"""Which checkpoint a comparison at the final checkpoint reads: never one along pretraining."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from harness.paper.claims_file import findings
from harness.paper.equal_time import at_step, wall_ratios
from harness.paper.figures import Role
from harness.paper.sources import Source
from harness.results.leaderboard import read_leaderboard, write_cell
from tests.harness.paper.rows import PAPER, by_key, encoder_rows, paper_row, source_of

SUITE = "paper-cpu-decoder"


def _validation(model: str, seed: int, val_ce: float, step: int) -> list[dict]:
    """A decoder's validation rows at `step`: its CE, its perplexity and the unigram bar."""
    rows = [
        paper_row(model, "validation", "val_ce", val_ce, seed, step),
        paper_row(model, "validation", "val_ppl", math.exp(val_ce), seed, step),
        paper_row(model, "validation", "unigram_ppl", 1000.0, seed, step),
    ]
    return [{**r, "suite": SUITE, "preset": "pythia-tiny"} for r in rows]


def _decoder_rows(root: Path) -> Path:
    """Seeds 0-2 of vanilla and headless+ft at step 2000, headless+ft worse by 0.3 (+0.01 x
    seed); vanilla's seed 0 was cut off after its step-1000 checkpoint, whose CE (6.0) would
    turn the comparison round if it stood in for the final one."""
    d = root / SUITE
    for seed in range(3):
        write_cell(d, f"ft{seed}", _validation("pythia-tiny-cwt-ft", seed, 5.1 + 0.01 * seed, 2000))
        if seed:
            write_cell(d, f"ce{seed}", _validation("pythia-tiny-ce", seed, 4.8, 2000))
    write_cell(d, "ce0.step-0001000", _validation("pythia-tiny-ce", 0, 6.0, 1000))
    return root


def test_a_seed_cut_off_before_its_final_checkpoint_is_left_out_and_said(tmp_path) -> None:
    found = by_key(findings(_decoder_rows(tmp_path)), "table3: validation loss")
    assert found.measured is not None
    assert found.measured.seeds == (1, 2)
    assert abs(found.measured.comparison.delta - 0.315) < 1e-9  # seeds 1 and 2 only
    assert found.measured.detail == (
        "left out: seed 0: pythia-tiny-ce's validation has steps 1000 only, "
        "not its final checkpoint yet"
    )


def test_a_gate_on_a_cut_off_run_waits_for_its_final_row(tmp_path) -> None:
    d = tmp_path / SUITE
    write_cell(d, "ft0", _validation("pythia-tiny-cwt-ft", 0, 5.1, 2000))
    write_cell(d, "ce0.step-0001000", _validation("pythia-tiny-ce", 0, 6.0, 1000))
    found = by_key(findings(tmp_path), "table3: validation loss")
    assert found.verdict == "not comparable"
    assert "validation: no `val_ppl` row of the final checkpoint (seed 0: pythia-tiny-ce's" in (
        found.reason
    )


def test_equal_time_leaves_out_a_headless_seed_cut_off_and_says_so(tmp_path) -> None:
    """cwt's seed 2 stopped after step 2000 (its rows move to a `.step-` file): equal time
    compares seeds 0 and 1, and the detail names the one left out."""
    import pandas as pd

    board = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02) / "paper-cpu-encoder"
    rows = pd.read_parquet(board / "rows.parquet")
    cut = (rows["model"] == "bert-tiny-cwt") & (rows["seed"] == 2)
    rows = rows.astype(object).where(rows.notna(), None)  # a null is None again, not NaN
    write_cell(board, "rows", rows[~cut].to_dict("records"))
    write_cell(board, "cwt2.step-0002000", rows[cut & (rows["step"] == 2000)].to_dict("records"))
    timed = by_key(findings(tmp_path), "table1-time: GLUE average")
    assert timed.measured is not None and timed.measured.seeds == (0, 1)
    assert timed.measured.detail.endswith(
        "left out: seed 2: bert-tiny-cwt's glue/average has steps 2000 only, "
        "not its final checkpoint yet"
    )


def _with_speed(root: Path, ratio: float) -> Path:
    """The side-by-side speed ratio of encoder_rows' boards set to `ratio`."""
    speed = [
        {**paper_row("bert-tiny-cwt", "throughput", "speedup_vs_baseline", ratio, s), "step": None}
        for s in range(3)
    ]
    write_cell(root / "paper-cpu-ablation", "speed", speed)
    return root


def test_at_step_reads_a_checkpoint_or_interpolates_in_log_steps() -> None:
    assert at_step([1000, 2000, 3000], [0.1, 0.2, 0.3], 2000.0) == (0.2, "step 2000")
    value, how = at_step([3000, 1000, 2000], [0.3, 0.1, 0.2], 2400.0)  # in any order
    w = math.log(1.2) / math.log(1.5)
    assert math.isclose(value, 0.2 + w * 0.1) and how == f"steps 2000-3000, weight {w:.2f} on 3000"
    assert at_step([1000, 2000], [0.1, 0.2], 750.0) is None  # before the first: no guess
    assert at_step([1000, 2000], [0.1, 0.2], 2500.0) is None  # after the last: no guess


def test_equal_time_between_checkpoints_interpolates_vanilla(tmp_path) -> None:
    """Headless is 1.25x faster: its 3000 steps are vanilla's 2400, between vanilla's
    checkpoints at 2000 and 3000. Vanilla is read there, not at its nearest checkpoint
    (2000), which would hand it 17 % less time than headless had."""
    root = _with_speed(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02), 1.25)
    timed = by_key(findings(root), "table1-time: GLUE average")
    assert timed.measured is not None and timed.measured.seeds == (0, 1, 2)
    w = math.log(1.2) / math.log(1.5)
    vanilla = 0.52 + w * 0.01 + 0.0005  # its average along steps (+0.0005 x seed: mean 0.0005)
    headless = 0.5 + 0.02 + 0.03 + 2 * 0.0005
    assert math.isclose(timed.measured.comparison.delta, headless - vanilla, rel_tol=1e-9)
    assert f"seeds 0, 1, 2: vanilla at steps 2000-3000, weight {w:.2f} on 3000" in (
        timed.measured.detail
    )
    assert timed.measured.runs["vanilla"] == "bert-tiny-ce (at the step of equal time)"


def test_equal_time_before_vanillas_first_checkpoint_is_not_comparable(tmp_path) -> None:
    """Headless 4x faster: equal time falls at vanilla's step 750, before its first
    checkpoint (1000). Nothing is extrapolated; the finding says why it has no figure."""
    root = _with_speed(encoder_rows(tmp_path, sst2_ce=0.85, gain=0.02), 4.0)
    timed = by_key(findings(root), "table1-time: GLUE average")
    assert timed.measured is None and timed.verdict == "not comparable"
    assert timed.reason == (
        "no vanilla checkpoints around the step of equal time of glue/average / average "
        "for both models"
    )


def test_equal_time_carries_the_speed_ratios_interval(tmp_path) -> None:
    """The speed ratio measured 1.2x, 1.5x and 1.8x side by side: its 95 % interval reaches
    past vanilla's checkpoints at one end (said, not evaluated) and inside them at the other
    (evaluated): the finding's interval spans both, its p is the larger."""
    root = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    speed = [
        {**paper_row("bert-tiny-cwt", "throughput", "speedup_vs_baseline", v, s), "step": None}
        for s, v in enumerate((1.2, 1.5, 1.8))
    ]
    write_cell(root / "paper-cpu-ablation", "speed", speed)  # replaces the fixture's 1.5 x3
    timed = by_key(findings(root), "table1-time: GLUE average")
    m = timed.measured
    assert m is not None and len(m.alternates) == 1  # the high end (0.75x is past 3000 steps)
    assert "the ratio's 95 % interval [0.75, 2.25] carried" in m.detail
    assert "at 0.75x vanilla's checkpoints end first: not evaluated" in m.detail
    point_low, point_high = m.comparison.interval_at(timed.alpha)
    low, high = timed.interval
    assert low <= point_low and high >= point_high and (low, high) != (point_low, point_high)
    assert timed.p_value == max(m.comparison.p, m.alternates[0].p)
    same = by_key(findings(encoder_rows(tmp_path / "same", 0.78, 0.02)), "table1-time: GLUE av")
    assert same.measured is not None and same.measured.alternates == ()  # no spread: no ends


def test_equal_time_is_checked_at_each_seeds_own_training_loop_ratio(tmp_path) -> None:
    """The side-by-side ratio (1.25x) decides; each seed's own training loops (0.15 s a
    vanilla step, 0.1 s a headless one: 1.5x) give a second reading, said beside it:
    vanilla at step 2000, a checkpoint, against headless at 3000."""
    root = _with_speed(encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02), 1.25)
    assert wall_ratios(*_glue_average(root)) == pytest.approx({0: 1.5, 1: 1.5, 2: 1.5})
    timed = by_key(findings(root), "table1-time: GLUE average")
    assert timed.measured is not None
    per_seed = [0.03 + 0.0005 * seed for seed in range(3)]  # headless at 3000 - vanilla at 2000
    check = f"Δ {sum(per_seed) / 3:.4g} ["
    said = "at each seed's own training-loop ratio instead (1.50-1.50x; a check, not the verdict)"
    assert timed.measured.check.startswith(f"{said}: {check}")
    assert "raw p" in timed.measured.check and said not in timed.measured.detail


def _glue_average(root: Path) -> tuple[pd.DataFrame, Source, Role]:
    """The rows, source and role of the GLUE average at equal time, as the comparison reads."""
    source = source_of(next(f for f in PAPER if f.key.startswith("table1-time: GLUE average")))
    return read_leaderboard(root / "paper-cpu-encoder"), source, "headless"
