"""`hlm bench --only bf16`: bf16 autocast against fp32, side by side, for the ladder's models.

Whether `--bf16` speeds a CPU run up depends on the machine: with AVX512-BF16 or AMX the
matrix products run in bf16; without them torch emulates bf16 and a step is slower. This
part times the training steps of the instrument ladder (suites/cpu-ladder.yaml) in both
precisions: modernbert-tiny and modernbert-mini (encoders) and pythia-tiny (decoder), ce and
cwt, at its shapes (64 x 128 tokens, a vocabulary of 8192; `--quick`: 16 x 128). The rows
give tokens/s in each precision and bf16's speed over fp32; the machine's rows above them
say which instructions it has. Every row is INFO: no goal rides on a machine's bf16 units.
"""

from __future__ import annotations

from benchmarks.steps import steppers, timed
from harness.bench.stepper import variant
from harness.bench.timing import Roofline, Row

# the ladder's models and shapes
MODELS = ("modernbert-tiny", "modernbert-mini", "pythia-tiny")
OBJECTIVES = ("ce", "cwt")
VOCAB, SEQ = 8192, 128


def bf16_model_rows(preset: str, batch: int, reps: int, peak: Roofline) -> list[Row]:
    """One model's steps, ce and cwt, in fp32 and under bf16 autocast, timed in one
    interleaved round-robin (so the four share the machine's state)."""
    fp32 = steppers(preset, VOCAB, batch, SEQ, {o: variant(o) for o in OBJECTIVES})
    bf16 = steppers(preset, VOCAB, batch, SEQ, {o: variant(o) for o in OBJECTIVES}, bf16=True)
    both = {
        **{f"{o} fp32": s for o, s in fp32.items()},
        **{f"{o} bf16": s for o, s in bf16.items()},
    }
    best = timed(both, peak, reps).best  # seconds per step
    tag = f"{preset} V={VOCAB} b={batch} s={SEQ}"
    rows = []
    for objective in OBJECTIVES:
        fast, slow = best[f"{objective} bf16"], best[f"{objective} fp32"]
        rows += [
            Row(f"{tag} {objective} fp32: tokens/s", batch * SEQ / slow, "tok/s"),
            Row(f"{tag} {objective} bf16: tokens/s", batch * SEQ / fast, "tok/s"),
            Row(f"{tag} {objective}: bf16 autocast speed-up over fp32", slow / fast, "x"),
        ]
    return rows


def ladder_bf16_rows(quick: bool, peak: Roofline) -> list[Row]:
    """Every ladder model's fp32 and bf16 steps (module docstring)."""
    batch, reps = (16, 2) if quick else (64, 3)
    return [row for preset in MODELS for row in bf16_model_rows(preset, batch, reps, peak)]
