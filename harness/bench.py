"""`hlm bench`: speed and memory of the losses and of whole training steps, side by side.

Each comparison is timed side by side (`harness.bench_timing`: interleaved rounds, best of
them, more rounds until every best is reproduced within 3% or twice the planned rounds have
run, MFU against the roofline sampled around each step). Memory is the RSS high-water mark
of a fresh process (`python -m harness.bench_probe`), minus its RSS just before the measured
work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from harness.bench_timing import Roofline, Row, check, interleaved, spread_row
from harness.machine import machine_rows
from harness.memory import torch_huge_pages
from harness.tasks.throughput import Stepper, matmul_roofline
from zoo.models import get_spec
from zoo.numerics import flush_denormal
from zoo.objectives import ObjectiveOptions, cwt_loss

SETTLE = 0.03  # a comparison's rounds go on until each variant's best is seen twice within 3%


def _loss_step(
    k: int, d: int, impl: str, duplicates: str = "keep", ids: torch.Tensor | None = None
) -> Callable[[], float]:
    g = torch.Generator().manual_seed(0)
    h = torch.randn(k, d, generator=g).requires_grad_()  # LayerNorm-scale outputs
    e = (0.05 * torch.randn(k, d, generator=g)).requires_grad_()  # embedding-scale targets

    def run() -> float:
        t = time.perf_counter()
        loss = cwt_loss(h, e, duplicates=duplicates, target_ids=ids, impl=impl)  # type: ignore[arg-type]
        loss.backward()
        return time.perf_counter() - t

    return run


def probe(kind: str, env: dict[str, str] | None = None, **kwargs: object) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "harness.bench_probe", kind, json.dumps(kwargs)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def bench_cwt(quick: bool, peak: Roofline) -> list[Row]:
    k, d = (8192, 768) if quick else (16384, 768)
    impls = ["plain", "chunked", "recompute", "torch"]
    creps = 2 if quick else 3
    ct = interleaved(
        {i: _loss_step(k, d, i) for i in impls}, warmup=1, reps=creps, peak=peak, settle=SETTLE
    )
    med = ct.best
    flops = 3 * 2.0 * k * k * d  # forward scores + the two gradient matmuls
    rows = [Row(f"cwt K={k} D={d} {i}: ms/step", 1000 * med[i], "ms") for i in impls]
    mem = {
        i: probe("cwt", k=k, d=d, impl=i)["growth_mb"] for i in ("plain", "chunked", "recompute")
    }
    rows += [Row(f"cwt K={k} {i}: peak extra memory", mem[i], "MiB") for i in mem]
    rows.append(
        check(f"cwt K={k}: chunked memory / plain", mem["chunked"] / mem["plain"], "x", "<=", 1 / 8)
    )
    rows.append(
        check(
            f"cwt K={k}: recompute memory / plain",
            mem["recompute"] / mem["plain"],
            "x",
            "<=",
            1 / 8,
        )
    )
    rows.append(
        check(f"cwt K={k}: chunked time / plain", med["chunked"] / med["plain"], "x", "<=", 1.15)
    )
    rows.append(Row(f"cwt K={k}: recompute time / plain", med["recompute"] / med["plain"], "x"))
    rows.append(
        Row(f"cwt K={k}: torch linear_cross_entropy time / plain", med["torch"] / med["plain"], "x")
    )
    for i in ("plain", "chunked"):
        rows.append(
            check(f"cwt K={k} {i}: FLOP/s / matmul roofline", ct.mfu(i, flops), "x", ">=", 0.8)
        )
    rows.append(spread_row(f"cwt K={k}", ct))
    # duplicate modes on Zipfian targets over a 50k vocabulary
    kd = 4096 if quick else 8192
    g = torch.Generator().manual_seed(0)
    zipf = 1.0 / torch.arange(1, 50_001, dtype=torch.float64)
    ids = torch.multinomial(zipf / zipf.sum(), kd, replacement=True, generator=g)
    dup = interleaved(
        {m: _loss_step(kd, d, "auto", m, ids) for m in ("keep", "mask", "unique")}, warmup=1, reps=3
    ).best
    rows += [Row(f"cwt K={kd} zipf duplicates={m}: ms/step", 1000 * dup[m], "ms") for m in dup]
    share = float((torch.bincount(ids)[ids] > 1).float().mean())
    rows.append(Row(f"cwt K={kd} zipf: rows whose token repeats in the batch", share, "frac"))
    rows.append(
        Row(f"cwt K={kd} zipf: unique speed-up over keep", dup["keep"] / dup["unique"], "x")
    )
    return rows


def steppers(
    preset: str,
    vocab: int,
    batch: int,
    seq: int,
    configs: dict[str, dict[str, Any]],
    device: str = "cpu",
    bf16: bool = False,
) -> dict[str, Stepper]:
    """One `Stepper` per named variant (keys: objective, options, hf_default, sparse, bf16,
    prune, fast_dropout); `bf16` turns autocast on for all of them."""
    spec = get_spec(preset, vocab)
    return {
        name: Stepper(
            spec,
            str(c.get("objective", "cwt")),
            batch,
            seq,
            0,
            options=c.get("options"),
            hf_default=bool(c.get("hf_default")),
            sparse=bool(c.get("sparse")),
            bf16=bf16 or bool(c.get("bf16")),
            prune_last_layer=bool(c.get("prune", True)),
            fast_dropout=bool(c.get("fast_dropout", True)),
            device=device,
        )
        for name, c in configs.items()
    }


def bench_steps(quick: bool, peak: Roofline) -> list[Row]:
    rows: list[Row] = []
    batch = 8 if quick else 32
    reps = 2 if quick else 5
    configs: dict[str, dict[str, Any]] = {
        "hf-default": {"objective": "ce", "hf_default": True},
        "vanilla": {"objective": "ce"},
        "vanilla-chunked": {"objective": "ce", "options": ObjectiveOptions(ce_impl="chunked")},
        "headless": {"objective": "cwt"},
        "headless-sparse": {"objective": "cwt", "sparse": True},
        "headless-sparse-full-last-layer": {"objective": "cwt", "sparse": True, "prune": False},
        "headless-sparse-torch-dropout": {
            "objective": "cwt",
            "sparse": True,
            "fast_dropout": False,
        },
    }
    st = steppers("bert-small", 50_000, batch, 128, configs)
    timing = interleaved(
        {k: s.step for k, s in st.items()}, warmup=1, reps=reps, peak=peak, settle=SETTLE
    )
    med = timing.best
    tag = f"bert-small V=50k b={batch} s=128"
    for name, s in st.items():
        rows += [
            Row(f"{tag} {name}: ms/step", 1000 * med[name], "ms"),
            Row(f"{tag} {name}: tokens/s", batch * 128 / med[name], "tok/s"),
            Row(f"{tag} {name}: TFLOP/s", s.flops / med[name] / 1e12, "TFLOP/s"),
            Row(f"{tag} {name}: MFU", timing.mfu(name, s.flops), "x"),
        ]
    # the headless step's embedding gradient is sparse by nature: "headless-sparse" is its best form
    rows.append(
        Row(
            f"{tag}: headless (dense emb. update) speed-up over hf-default",
            med["hf-default"] / med["headless"],
            "x",
        )
    )
    rows.append(
        check(
            f"{tag}: headless-sparse speed-up over hf-default",
            med["hf-default"] / med["headless-sparse"],
            "x",
            ">=",
            3.5,
        )
    )
    rows.append(
        Row(
            f"{tag}: headless-sparse speed-up over hf-default, medians",
            timing.median["hf-default"] / timing.median["headless-sparse"],
            "x",
        )
    )
    hf_pred = st["hf-default"].flops / st["headless-sparse"].flops
    rows.append(Row(f"{tag}: FLOP-predicted speed-up over hf-default", hf_pred, "x"))
    rows.append(
        Row(
            f"{tag}: headless-sparse over hf-default, measured / FLOP-predicted",
            med["hf-default"] / med["headless-sparse"] / hf_pred,
            "x",
        )
    )
    rows.append(
        Row(
            f"{tag}: headless-sparse speed-up over hf-default at equal machine speed "
            "(ratio of roofline costs)",
            timing.roofline_cost("hf-default") / timing.roofline_cost("headless-sparse"),
            "x",
        )
    )
    rows.append(
        Row(
            f"{tag}: last layer at the masked positions only, speed-up",
            med["headless-sparse-full-last-layer"] / med["headless-sparse"],
            "x",
        )
    )
    rows.append(
        Row(
            f"{tag}: fast dropout and sliced attention, speed-up over torch's dropout",
            med["headless-sparse-torch-dropout"] / med["headless-sparse"],
            "x",
        )
    )
    rows.append(spread_row(tag, timing))
    plain_alloc = probe(
        "speedup",
        env={"THP_MEM_ALLOC_ENABLE": "0"},
        preset="bert-small",
        vocab=50_000,
        batch=batch,
        seq=128,
        reps=reps,
    )
    rows.append(
        Row(
            f"{tag}: headless-sparse speed-up over hf-default, torch's default allocator and "
            f"dropout (huge pages: {'yes' if plain_alloc['huge_pages'] else 'no'}; fresh process)",
            plain_alloc["speedup"],
            "x",
        )
    )
    fair = min(med["vanilla"], med["vanilla-chunked"])
    predicted = st["vanilla"].flops / st["headless"].flops
    rows.append(Row(f"{tag}: FLOP-predicted speed-up over fair vanilla", predicted, "x"))
    rows.append(
        Row(
            f"{tag}: measured / predicted speed-up, dense embedding update",
            fair / med["headless"] / predicted,
            "x",
        )
    )
    rows.append(
        check(
            f"{tag}: measured / predicted speed-up, sparse embedding update",
            fair / med["headless-sparse"] / predicted,
            "x",
            ">=",
            0.9,
        )
    )
    rows.append(
        Row(
            f"{tag}: headless MFU, dense embedding update",
            timing.mfu("headless", st["headless"].flops),
            "x",
        )
    )
    rows.append(
        check(
            f"{tag}: headless-sparse MFU",
            timing.mfu("headless-sparse", st["headless-sparse"].flops),
            "x",
            ">=",
            0.5,
        )
    )
    # decoder: pythia-70m shape
    dbatch = 2 if quick else 4
    dst = steppers(
        "pythia-70m",
        50_304,
        dbatch,
        512,
        {
            "vanilla": {"objective": "ce"},
            "headless": {"objective": "cwt"},
            "headless-sparse": {"objective": "cwt", "sparse": True},
        },
    )
    dtiming = interleaved(
        {k: s.step for k, s in dst.items()}, warmup=1, reps=reps, peak=peak, settle=SETTLE
    )
    dmed = dtiming.best
    dtag = f"pythia-70m V=50k b={dbatch} s=512"
    rows += [Row(f"{dtag} {k}: tokens/s", dbatch * 512 / v, "tok/s") for k, v in dmed.items()]
    rows.append(spread_row(dtag, dtiming))
    dpred = dst["vanilla"].flops / dst["headless"].flops
    rows.append(Row(f"{dtag}: FLOP-predicted speed-up", dpred, "x"))
    rows.append(
        Row(
            f"{dtag}: measured / predicted speed-up, dense embedding update",
            dmed["vanilla"] / dmed["headless"] / dpred,
            "x",
        )
    )
    rows.append(
        check(
            f"{dtag}: measured / predicted speed-up, sparse embedding update",
            dmed["vanilla"] / dmed["headless-sparse"] / dpred,
            "x",
            ">=",
            0.9,
        )
    )
    # flat in V: headless at 8k vs 120k, dense and sparse embedding updates
    vb = 8 if quick else 32
    flat: dict[str, Stepper] = {}
    for v in (8_000, 120_000):
        for sparse in (False, True):
            flat[f"V={v} {'sparse' if sparse else 'dense'}"] = Stepper(
                get_spec("bert-small", v), "cwt", vb, 128, 0, sparse=sparse
            )
    ftiming = interleaved(
        {k: s.step for k, s in flat.items()}, warmup=1, reps=reps, peak=peak, settle=SETTLE
    )
    fmed = ftiming.best
    rows += [
        Row(f"bert-small headless b={vb} {k}: ms/step", 1000 * v, "ms") for k, v in fmed.items()
    ]
    rows.append(spread_row(f"bert-small headless b={vb} V=8k/120k", ftiming))
    rows.append(
        Row(
            "headless step time V=120k / V=8k, dense embedding update",
            fmed["V=120000 dense"] / fmed["V=8000 dense"],
            "x",
        )
    )
    rows.append(
        check(
            "headless step time V=120k / V=8k, sparse embedding update",
            fmed["V=120000 sparse"] / fmed["V=8000 sparse"],
            "x",
            "<=",
            1.1,
        )
    )
    # bf16 autocast
    bst = {
        "fp32": Stepper(get_spec("bert-small", 50_000), "cwt", batch, 128, 0),
        "bf16": Stepper(get_spec("bert-small", 50_000), "cwt", batch, 128, 0, bf16=True),
    }
    bmed = interleaved({k: s.step for k, s in bst.items()}, warmup=1, reps=reps, peak=peak).best
    rows.append(
        Row(f"{tag} headless: bf16 autocast speed-up over fp32", bmed["fp32"] / bmed["bf16"], "x")
    )
    # memory of a training step vs batch size, fresh processes
    mem: dict[tuple[str, int], float] = {}
    for mb in (8,) if quick else (8, 32):
        for name, c in (
            ("hf-default", {"objective": "ce", "hf_default": True}),
            ("vanilla", {"objective": "ce"}),
            ("headless", {"objective": "cwt"}),
        ):
            m = probe("step", preset="bert-small", vocab=50_000, batch=mb, seq=128, **c)
            mem[name, mb] = m["growth_mb"]
            rows.append(
                Row(
                    f"bert-small V=50k b={mb} s=128 {name}: peak RSS growth, 2 steps",
                    m["growth_mb"],
                    "MiB",
                )
            )
        rows.append(
            Row(
                f"bert-small V=50k b={mb}: headless / vanilla peak RSS growth",
                mem["headless", mb] / mem["vanilla", mb],
                "x",
            )
        )
    return rows


def run_bench(quick: bool = False, parts: tuple[str, ...] = ("cwt", "steps")) -> list[Row]:
    with flush_denormal(True):  # as pretraining does by default (PretrainConfig.flush_denormal)
        return _run_bench(quick, parts)


def _run_bench(quick: bool, parts: tuple[str, ...]) -> list[Row]:
    torch.manual_seed(0)
    peak = Roofline()
    for _ in range(3):
        peak.sample()
    burst = matmul_roofline(4096, 768)
    rows = [
        *machine_rows(),
        Row("fp32 torch.mm [4096, 768] @ [768, 4096], best single product", burst / 1e9, "GFLOP/s"),
        Row("torch tensors on transparent huge pages (1 = yes)", float(torch_huge_pages()), "bool"),
    ]
    if "cwt" in parts:
        rows += bench_cwt(quick, peak)
    if "steps" in parts:
        rows += bench_steps(quick, peak)
    rows.append(
        Row("fp32 roofline: 12 such products back to back, best sample", peak.best / 1e9, "GFLOP/s")
    )
    rows.append(Row("fp32 roofline: worst sample", min(peak.samples) / 1e9, "GFLOP/s"))
    return rows


def profile_headless_step(batch: int = 32, steps: int = 3) -> str:
    """torch.profiler table of a headless bert-small training step (V=50k, seq 128, sparse
    embedding update: the `headless-sparse` row of the table)."""
    from torch.profiler import ProfilerActivity, profile

    with flush_denormal(True):
        s = Stepper(get_spec("bert-small", 50_000), "cwt", batch, 128, 0, sparse=True)
        s.step()
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(steps):
                s.step()
    return str(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
