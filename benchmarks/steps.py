"""`hlm bench` part `steps`: whole training steps side by side, on the CPU.

Variants (`Variant`): hf-default (Hugging Face's own MLM step, every position through the
head), the fair vanilla (our step, CE at the masked positions only; plain or chunked), and
headless (CWT; dense or sparse embedding update; with the last layer pruned or not; with our
dropout or torch's). Goals: headless-sparse over hf-default and over the fair vanilla, each
measured / FLOP-predicted >= 0.9 (the raw speed-ups are INFO: the FLOP ratio decides them);
headless-sparse MFU >= 0.5; pythia-70m measured / predicted >= 0.9; headless step time flat in
V (V = 120k / 8k <= 1.1 with sparse embeddings).
"""

from __future__ import annotations

from harness.bench.probe import probe
from harness.bench.stepper import Stepper, Variant, variant
from harness.bench.timing import Roofline, Row, Timing, check, interleaved, spread_row
from zoo.models import get_spec
from zoo.objectives import LossOptions

SETTLE = 0.03  # a comparison's rounds go on until each variant's best is seen twice within 3%

ENCODER_VARIANTS = {
    "hf-default": variant("ce", hf_default=True),
    "vanilla": variant("ce"),
    "vanilla-chunked": variant("ce", loss=LossOptions(ce_impl="chunked")),
    "headless": variant("cwt"),
    "headless-sparse": variant("cwt", sparse_embeddings=True),
    "headless-sparse-full-last-layer": variant(
        "cwt", sparse_embeddings=True, prune_last_layer=False
    ),
    "headless-sparse-torch-dropout": variant("cwt", sparse_embeddings=True, fast_dropout=False),
}
DECODER_VARIANTS = {
    "vanilla": variant("ce"),
    "headless": variant("cwt"),
    "headless-sparse": variant("cwt", sparse_embeddings=True),
}


def steppers(
    preset: str,
    vocab: int,
    batch: int,
    seq: int,
    variants: dict[str, Variant],
    device: str = "cpu",
    bf16: bool = False,
) -> dict[str, Stepper]:
    """One `Stepper` per named variant; `bf16` turns autocast on for all of them."""
    spec = get_spec(preset, vocab)
    return {
        name: Stepper(spec, v.changed(bf16=True) if bf16 else v, batch, seq, 0, device)
        for name, v in variants.items()
    }


def timed(st: dict[str, Stepper], peak: Roofline, reps: int) -> Timing:
    return interleaved(
        {k: s.step for k, s in st.items()}, warmup=1, reps=reps, peak=peak, settle=SETTLE
    )


def _speedup_rows(tag: str, st: dict[str, Stepper], t: Timing) -> list[Row]:
    med = t.best
    hf_pred = st["hf-default"].flops / st["headless-sparse"].flops
    fair = min(med["vanilla"], med["vanilla-chunked"])
    predicted = st["vanilla"].flops / st["headless"].flops
    return [
        Row(
            f"{tag}: headless (dense emb. update) speed-up over hf-default",
            med["hf-default"] / med["headless"],
            "x",
        ),
        Row(
            f"{tag}: headless-sparse speed-up over hf-default",
            med["hf-default"] / med["headless-sparse"],
            "x",
        ),
        Row(f"{tag}: FLOP-predicted speed-up over hf-default", hf_pred, "x"),
        check(
            f"{tag}: headless-sparse over hf-default, measured / FLOP-predicted",
            med["hf-default"] / med["headless-sparse"] / hf_pred,
            "x",
            ">=",
            0.9,
        ),
        Row(
            f"{tag}: headless-sparse speed-up over hf-default at equal machine speed (ratio of "
            "roofline costs)",
            t.roofline_cost("hf-default") / t.roofline_cost("headless-sparse"),
            "x",
        ),
        Row(f"{tag}: FLOP-predicted speed-up over fair vanilla", predicted, "x"),
        Row(
            f"{tag}: measured / predicted speed-up, dense embedding update",
            fair / med["headless"] / predicted,
            "x",
        ),
        check(
            f"{tag}: measured / predicted speed-up, sparse embedding update",
            fair / med["headless-sparse"] / predicted,
            "x",
            ">=",
            0.9,
        ),
    ]


def encoder_rows(quick: bool, peak: Roofline) -> list[Row]:
    batch, reps = (8, 2) if quick else (32, 5)
    st = steppers("bert-small", 50_000, batch, 128, ENCODER_VARIANTS)
    t = timed(st, peak, reps)
    med, tag = t.best, f"bert-small V=50k b={batch} s=128"
    rows = []
    for name, s in st.items():
        rows += [
            Row(f"{tag} {name}: ms/step", 1000 * med[name], "ms"),
            Row(f"{tag} {name}: tokens/s", batch * 128 / med[name], "tok/s"),
            Row(f"{tag} {name}: TFLOP/s", s.flops / med[name] / 1e12, "TFLOP/s"),
            Row(f"{tag} {name}: MFU", t.mfu(name, s.flops), "x"),
        ]
    rows += _speedup_rows(tag, st, t)
    rows += [
        Row(
            f"{tag}: last layer at the masked positions only, speed-up",
            med["headless-sparse-full-last-layer"] / med["headless-sparse"],
            "x",
        ),
        Row(
            f"{tag}: fast dropout and sliced attention, speed-up over torch's dropout",
            med["headless-sparse-torch-dropout"] / med["headless-sparse"],
            "x",
        ),
        spread_row(tag, t),
        Row(
            f"{tag}: headless MFU, dense embedding update",
            t.mfu("headless", st["headless"].flops),
            "x",
        ),
        check(
            f"{tag}: headless-sparse MFU",
            t.mfu("headless-sparse", st["headless-sparse"].flops),
            "x",
            ">=",
            0.5,
        ),
    ]
    stock = probe(
        "speedup",
        env={"THP_MEM_ALLOC_ENABLE": "0"},
        preset="bert-small",
        vocab=50_000,
        batch=batch,
        seq=128,
        reps=reps,
    )
    pages = "yes" if stock["huge_pages"] else "no"
    rows.append(
        Row(
            f"{tag}: headless-sparse speed-up over hf-default, torch's default allocator and "
            f"dropout (huge pages: {pages}; fresh process)",
            stock["speedup"],
            "x",
        )
    )
    return rows


def decoder_rows(quick: bool, peak: Roofline) -> list[Row]:
    batch, reps = (2, 2) if quick else (4, 5)
    st = steppers("pythia-70m", 50_304, batch, 512, DECODER_VARIANTS)
    t = timed(st, peak, reps)
    med, tag = t.best, f"pythia-70m V=50k b={batch} s=512"
    pred = st["vanilla"].flops / st["headless"].flops
    return [
        *[Row(f"{tag} {k}: tokens/s", batch * 512 / v, "tok/s") for k, v in med.items()],
        spread_row(tag, t),
        Row(f"{tag}: FLOP-predicted speed-up", pred, "x"),
        Row(
            f"{tag}: measured / predicted speed-up, dense embedding update",
            med["vanilla"] / med["headless"] / pred,
            "x",
        ),
        check(
            f"{tag}: measured / predicted speed-up, sparse embedding update",
            med["vanilla"] / med["headless-sparse"] / pred,
            "x",
            ">=",
            0.9,
        ),
    ]


def flat_in_v_rows(quick: bool, peak: Roofline) -> list[Row]:
    batch, reps = (8, 2) if quick else (32, 5)
    st = {
        f"V={v} {'sparse' if sparse else 'dense'}": Stepper(
            get_spec("bert-small", v), variant("cwt", sparse_embeddings=sparse), batch, 128
        )
        for v in (8_000, 120_000)
        for sparse in (False, True)
    }
    med = timed(st, peak, reps).best
    tag = f"bert-small headless b={batch}"
    return [
        *[Row(f"{tag} {k}: ms/step", 1000 * v, "ms") for k, v in med.items()],
        Row(
            "headless step time V=120k / V=8k, dense embedding update",
            med["V=120000 dense"] / med["V=8000 dense"],
            "x",
        ),
        check(
            "headless step time V=120k / V=8k, sparse embedding update",
            med["V=120000 sparse"] / med["V=8000 sparse"],
            "x",
            "<=",
            1.1,
        ),
    ]


def bf16_rows(quick: bool, peak: Roofline) -> list[Row]:
    batch, reps = (8, 2) if quick else (32, 5)
    st = steppers(
        "bert-small",
        50_000,
        batch,
        128,
        {"fp32": variant("cwt"), "bf16": variant("cwt", bf16=True)},
    )
    med = timed(st, peak, reps).best
    tag = f"bert-small V=50k b={batch} s=128"
    return [
        Row(f"{tag} headless: bf16 autocast speed-up over fp32", med["fp32"] / med["bf16"], "x")
    ]


def memory_rows(quick: bool) -> list[Row]:
    rows = []
    for batch in (8,) if quick else (8, 32):
        growth = {}
        for name in ("hf-default", "vanilla", "headless"):
            variant = ENCODER_VARIANTS[name]
            m = probe(
                "step",
                None,
                preset="bert-small",
                vocab=50_000,
                batch=batch,
                seq=128,
                steps=2,
                variant=variant,
            )
            growth[name] = m["growth_mb"]
            rows.append(
                Row(
                    f"bert-small V=50k b={batch} s=128 {name}: peak RSS growth, 2 steps",
                    growth[name],
                    "MiB",
                )
            )
        rows.append(
            Row(
                f"bert-small V=50k b={batch}: headless / vanilla peak RSS growth",
                growth["headless"] / growth["vanilla"],
                "x",
            )
        )
    return rows


def bench_steps(quick: bool, peak: Roofline) -> list[Row]:
    return [
        *encoder_rows(quick, peak),
        *decoder_rows(quick, peak),
        *flat_in_v_rows(quick, peak),
        *bf16_rows(quick, peak),
        *memory_rows(quick),
    ]
