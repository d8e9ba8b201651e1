"""Result rows, the sampled matmul roofline and interleaved timing for `hlm bench`.

Timing on a shared machine: the variants of one comparison are stepped round-robin (after a
warm-up), and each is timed by its best repetition; with `settle`, rounds continue (up to a cap)
until every variant's best has been reproduced within a few percent. Contention from other
tenants only ever slows a step down, so the minimum is the estimate of the machine's own speed
(as `timeit` advises); the median is kept for the spread row. The fp32 `torch.mm` roofline is
sampled between consecutive steps (12 products back to back, about half a second), and each MFU
is a step's FLOP/s over the roofline measured around that very step (median over repetitions).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch


@dataclass
class Row:
    name: str
    value: float
    unit: str
    target: str = ""
    status: str = "INFO"  # PASS / FAIL / INFO

    def judged(self) -> Row:
        if not self.target:
            return self
        op, bound = self.target.split()
        ok = self.value >= float(bound) if op == ">=" else self.value <= float(bound)
        return replace(self, status="PASS" if ok else "FAIL")


def check(name: str, value: float, unit: str, op: str, bound: float) -> Row:
    return Row(name, value, unit, f"{op} {bound:g}").judged()


class Roofline:
    """Sustained fp32 `torch.mm` FLOP/s of the CWT score shape, [4096, 768] @ [768, 4096]:
    each sample times `reps` back-to-back products (about half a second), so it is estimated
    over a stretch of time, like the multi-second steps it is compared with."""

    def __init__(
        self,
        n: int = 4096,
        d: int = 768,
        reps: int = 12,
        device: str = "cpu",
        dtype: torch.dtype = torch.float32,
    ) -> None:
        self.a = torch.randn(n, d, device=device, dtype=dtype)
        self.b = torch.randn(d, n, device=device, dtype=dtype)
        self.flops = 2.0 * n * n * d * reps
        self.reps, self.cuda = reps, device == "cuda"
        self.samples: list[float] = []
        torch.mm(self.a, self.b)

    def sample(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(self.reps):
            torch.mm(self.a, self.b)
        if self.cuda:
            torch.cuda.synchronize()
        self.samples.append(self.flops / (time.perf_counter() - t))
        return self.samples[-1]

    @property
    def best(self) -> float:
        return max(self.samples) if self.samples else self.sample()


@dataclass
class Timing:
    best: dict[str, float]  # seconds
    median: dict[str, float]
    # per repetition: (seconds, the roofline sampled just before and after it, averaged)
    local: dict[str, list[tuple[float, float]]]

    @property
    def rounds(self) -> int:
        return min(len(v) for v in self.local.values())

    def spread(self) -> float:
        """Worst median / best over the variants: how noisy this comparison was."""
        return max(self.median[k] / self.best[k] for k in self.best)

    def mfu(self, name: str, flops: float) -> float:
        """Median over repetitions of achieved FLOP/s over the roofline measured around that
        very repetition: contention that slows both is divided out, and the median keeps a
        repetition whose roofline samples alone were slowed (ratio too high) or whose step
        alone was (too low) from deciding."""
        return statistics.median(flops / dt / peak for dt, peak in self.local[name])

    def roofline_cost(self, name: str) -> float:
        """Median over repetitions of a step's seconds times the roofline sampled around it
        (the FLOPs that `torch.mm` did in as long): its time with the machine's speed divided
        out. A ratio of two costs is a speed-up at equal machine speed, which drift between
        the variants' fastest rounds does not move (for an odd count of repetitions it equals
        the FLOP-predicted ratio x the MFU ratio)."""
        return statistics.median(dt * peak for dt, peak in self.local[name])


def settled(times: dict[str, list[float]], within: float) -> bool:
    """Every variant's best time has been seen twice, to within `within` (relative): its
    best is the machine's speed, not one round that alone escaped (or alone met) contention."""
    return all(len(v) >= 2 and sorted(v)[1] <= min(v) * (1 + within) for v in times.values())


def interleaved(
    fns: dict[str, Callable[[], float]],
    warmup: int,
    reps: int,
    peak: Roofline | None = None,
    settle: float | None = None,
    max_reps: int | None = None,
) -> Timing:
    """Best and median seconds of each fn, run round-robin so they share the machine's state;
    with `peak`, the roofline is sampled between consecutive calls. With `settle`, rounds go on
    after `reps` until `settled(times, settle)` or `max_reps` rounds (default 2 x reps)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    local: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    before = peak.sample() if peak is not None else 0.0
    cap = reps if settle is None else max(reps, max_reps or 2 * reps)
    for i in range(warmup + cap):
        if i >= warmup + reps and settle is not None and settled(times, settle):
            break
        for k, fn in fns.items():
            dt = fn()
            after = peak.sample() if peak is not None else 0.0
            if i >= warmup:
                times[k].append(dt)
                local[k].append((dt, (before + after) / 2))
            before = after
    return Timing(
        best={k: min(v) for k, v in times.items()},
        median={k: statistics.median(v) for k, v in times.items()},
        local=local,
    )


def spread_row(tag: str, t: Timing) -> Row:
    return Row(f"{tag}: timing spread, worst median / best of {t.rounds} rounds", t.spread(), "x")


def format_rows(rows: list[Row], as_json: bool) -> str:
    if as_json:
        keys = ("name", "value", "unit", "target", "status")
        return json.dumps([{k: getattr(r, k) for k in keys} for r in rows], indent=2)
    from tabulate import tabulate

    table = [[r.name, f"{r.value:.4g}", r.unit, r.target, r.status] for r in rows]
    return tabulate(
        table, headers=["measurement", "value", "unit", "target", "status"], tablefmt="github"
    )
