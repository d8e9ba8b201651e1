"""`hlm bench` plumbing on tiny shapes (the real measurements are `hlm bench` itself)."""

from __future__ import annotations

import json

import torch

from harness.bench import Row, _check, format_rows, interleaved, probe
from harness.memory import peak_mb, reset_peak, rss_mb


def test_check_and_json_rows() -> None:
    assert _check("x", 0.1, "x", "<=", 0.125).status == "PASS"
    assert _check("x", 0.2, "x", "<=", 0.125).status == "FAIL"
    assert _check("y", 4.0, "x", ">=", 3.5).target == ">= 3.5"
    rows = json.loads(
        format_rows([Row("a", 1.0, "ms"), _check("b", 2.0, "x", ">=", 3.0)], as_json=True)
    )
    assert rows == [
        {"name": "a", "value": 1.0, "unit": "ms", "target": "", "status": "INFO"},
        {"name": "b", "value": 2.0, "unit": "x", "target": ">= 3", "status": "FAIL"},
    ]
    table = format_rows([Row("a", 1.0, "ms")], as_json=False)
    assert "| measurement" in table and "INFO" in table


def test_interleaved_runs_round_robin() -> None:
    order: list[str] = []
    med = interleaved(
        {"a": lambda: order.append("a") or 1.0, "b": lambda: order.append("b") or 3.0},
        warmup=1,
        reps=2,
    )
    assert order == ["a", "b"] * 3 and med == {"a": 1.0, "b": 3.0}


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
