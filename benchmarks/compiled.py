"""`hlm bench --only compile`: the training step eager and through torch.compile, side by side.

On the CPU torch.compile uses inductor's C++ backend (a C++ compiler must be on the PATH); the
first step of a compiled variant pays the compilation and is a warm-up, not a measurement.
The rows are INFO: whether compilation pays depends on the machine and the shapes.
"""

from __future__ import annotations

from benchmarks.steps import steppers, timed
from harness.bench.stepper import variant
from harness.bench.timing import Roofline, Row, spread_row

VARIANTS = {
    "vanilla": variant("ce"),
    "vanilla-compiled": variant("ce", compile=True),
    "headless": variant("cwt"),
    "headless-compiled": variant("cwt", compile=True),
}


def _rows(preset: str, batch: int, seq: int, peak: Roofline, reps: int) -> list[Row]:
    st = steppers(preset, 50_304, batch, seq, VARIANTS)
    t = timed(st, peak, reps)
    tag = f"{preset} V=50k b={batch} s={seq}"
    best = t.best
    return [
        *[Row(f"{tag} {k}: ms/step", 1000 * v, "ms") for k, v in best.items()],
        spread_row(tag, t),
        Row(
            f"{tag}: torch.compile speed-up, vanilla",
            best["vanilla"] / best["vanilla-compiled"],
            "x",
        ),
        Row(
            f"{tag}: torch.compile speed-up, headless",
            best["headless"] / best["headless-compiled"],
            "x",
        ),
        Row(
            f"{tag}: compiled headless speed-up over compiled vanilla",
            best["vanilla-compiled"] / best["headless-compiled"],
            "x",
        ),
    ]


def compile_rows(quick: bool, peak: Roofline) -> list[Row]:
    reps = 2 if quick else 4
    rows = _rows("bert-small", 8 if quick else 16, 128, peak, reps)
    return rows + _rows("pythia-70m", 2 if quick else 4, 512 if not quick else 256, peak, reps)
