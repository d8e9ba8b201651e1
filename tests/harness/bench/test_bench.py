"""`hlm bench` plumbing on tiny shapes (the real measurements are `hlm bench` itself)."""

from __future__ import annotations

import json

import torch

from harness.bench.memory import peak_mb, reset_peak, rss_mb
from harness.bench.probe import probe
from harness.bench.timing import Roofline, Row, check, format_rows, interleaved, settled


def test_check_and_json_rows() -> None:
    assert check("x", 0.1, "x", "<=", 0.125).status == "PASS"
    assert check("x", 0.2, "x", "<=", 0.125).status == "FAIL"
    assert check("y", 4.0, "x", ">=", 3.5).target == ">= 3.5"
    rows = json.loads(
        format_rows([Row("a", 1.0, "ms"), check("b", 2.0, "x", ">=", 3.0)], as_json=True)
    )
    assert rows == [
        {"name": "a", "value": 1.0, "unit": "ms", "target": "", "status": "INFO"},
        {"name": "b", "value": 2.0, "unit": "x", "target": ">= 3", "status": "FAIL"},
    ]
    table = format_rows([Row("a", 1.0, "ms")], as_json=False)
    assert "| measurement" in table and "INFO" in table


def test_interleaved_runs_round_robin_and_keeps_best_and_median() -> None:
    order: list[str] = []
    a_times = iter([9.0, 2.0, 1.0, 5.0])  # the warm-up (9.0) is dropped

    def a() -> float:
        order.append("a")
        return next(a_times)

    t = interleaved({"a": a, "b": lambda: order.append("b") or 3.0}, warmup=1, reps=3)
    assert order == ["a", "b"] * 4
    assert t.best == {"a": 1.0, "b": 3.0} and t.median == {"a": 2.0, "b": 3.0}
    assert t.spread() == 2.0


def test_interleaved_settles_until_every_best_is_reproduced() -> None:
    scripted = iter([5.0, 1.0, 3.0, 2.0, 1.02, 9.0])  # 1.0 is reproduced (1.02) in round 5

    def a() -> float:
        return next(scripted)

    t = interleaved({"a": a, "b": lambda: 2.0}, warmup=0, reps=2, settle=0.03, max_reps=6)
    assert t.rounds == 5 and t.best["a"] == 1.0  # stopped as soon as both were settled
    assert settled({"a": [1.0, 1.02], "b": [2.0, 2.0]}, 0.03)
    assert not settled({"a": [1.0, 1.05]}, 0.03) and not settled({"a": [1.0]}, 0.03)
    capped = interleaved({"a": iter([1.0, 2.0, 3.0, 4.0]).__next__}, 0, 2, settle=0.01)
    assert capped.rounds == 4  # never settled: stops at the default cap, 2 x reps


def test_interleaved_samples_the_roofline_around_each_step() -> None:
    peak = Roofline(n=64, d=32, reps=2)
    t = interleaved({"a": lambda: 1.0, "b": lambda: 2.0}, warmup=1, reps=2, peak=peak)
    assert len(peak.samples) == 1 + 2 * 3  # one before the first step, one after each
    assert [dt for dt, _ in t.local["b"]] == [2.0, 2.0]
    s = peak.samples  # b's first measured step ran between samples 3 and 4
    assert t.local["b"][0][1] == (s[3] + s[4]) / 2


def test_mfu_divides_each_step_by_its_own_roofline() -> None:
    t = interleaved({"a": lambda: 1.0}, warmup=0, reps=1)
    t.local = {"a": [(2.0, 100.0), (1.0, 400.0), (4.0, 10.0)]}  # FLOP/s: 50, 100, 25
    assert t.mfu("a", 100.0) == 0.5  # median of 0.5, 0.25 and 2.5 (roofline alone slowed)


def test_roofline_cost_divides_out_the_machine_speed() -> None:
    t = interleaved({"slow": lambda: 1.0, "fast": lambda: 1.0}, warmup=0, reps=1)
    # the machine ran at half speed whenever "slow" stepped: the fastest rounds say 4.4x,
    # at equal machine speed "slow" costs 2x "fast"
    t.local = {
        "slow": [(4.0, 50.0), (4.4, 50.0), (5.0, 40.0)],  # costs 200, 220, 200
        "fast": [(1.0, 100.0), (1.0, 110.0), (0.9, 100.0)],  # costs 100, 110, 90
    }
    assert t.roofline_cost("slow") == 200.0 and t.roofline_cost("fast") == 100.0
    flops = {"slow": 800.0, "fast": 200.0}  # odd count: FLOP ratio x MFU ratio, the same
    equal_speed = flops["slow"] / flops["fast"] * t.mfu("fast", 200.0) / t.mfu("slow", 800.0)
    assert abs(t.roofline_cost("slow") / t.roofline_cost("fast") - equal_speed) < 1e-12


def test_peak_memory_is_reset_and_measured() -> None:
    reset_peak()
    base = peak_mb()
    assert abs(base - rss_mb()) < 64
    x = torch.ones(64 * 2**20 // 4 * 4)  # 256 MiB, touched
    assert peak_mb() - base > 200
    del x


def test_fresh_process_probe_sees_the_plain_score_matrix() -> None:
    plain = probe("cwt", k=2048, d=64, impl="plain")["growth_mb"]
    chunked = probe("cwt", k=2048, d=64, impl="chunked")["growth_mb"]
    # plain holds [K, K] fp32 scores and their softmax gradient (2 x 16 MiB); chunked never does
    assert plain > 30 and chunked < plain


def test_speedup_probe_runs_in_a_fresh_process_with_its_own_allocator_setting() -> None:
    out = probe(
        "speedup",
        env={"THP_MEM_ALLOC_ENABLE": "0"},
        preset="bert-tiny",
        vocab=400,
        batch=2,
        seq=16,
        reps=1,
    )
    assert out["speedup"] > 0 and out["huge_pages"] is False
