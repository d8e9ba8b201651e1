"""`hlm bench --device cuda`: the same comparisons on a GPU, with the vendors' kernels.

The benchmark's goals are stated for the CPU, so on CUDA every row is informative (INFO). Loss
kernels run in fp32 (TF32 off, torch's default for matmuls); training steps run under bf16
autocast, as GPU pretraining does, and their MFU is against a bf16 `torch.mm` roofline
measured in the same run. Times come from `torch.cuda.synchronize` around each call, by the
best of interleaved rounds (`harness.bench.timing.interleaved`); memory is the CUDA caching
allocator's peak (`max_memory_allocated`) over the call, minus what was allocated before it.
Cut Cross-Entropy (``cce``) and Liger-Kernel (``liger``) rows appear where their packages are
installed (`zoo.objectives.external`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.steps import steppers
from harness.bench.memory import cuda_peak_mb
from harness.bench.stepper import Stepper, Variant, variant
from harness.bench.timing import Row, interleaved, spread_row
from zoo.objectives import LossOptions, cwt_loss
from zoo.objectives.base import LossInputs, VocabHead
from zoo.objectives.builtin import ce_loss
from zoo.objectives.kernels import KERNELS

DEV = torch.device("cuda")
log = logging.getLogger(__name__)


def _logged(rows: list[Row]) -> list[Row]:
    """Log each row as it is measured: a benchmark cut off by a time limit keeps what it had."""
    for r in rows:
        log.info("bench row: %s = %.4g %s", r.name, r.value, r.unit)
    return rows


def _timed(fn: Callable[[], Any]) -> Callable[[], float]:
    def run() -> float:
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        return time.perf_counter() - t

    return run


def mm_roofline(dtype: torch.dtype, n: int = 8192, reps: int = 20) -> float:
    a, b = torch.randn(n, n, device=DEV, dtype=dtype), torch.randn(n, n, device=DEV, dtype=dtype)
    for _ in range(3):
        torch.mm(a, b)
    dt = _timed(lambda: [torch.mm(a, b) for _ in range(reps)])()
    return 2.0 * n**3 * reps / dt


def _externals() -> list[str]:
    return [name for name, k in KERNELS.items() if k.vendor is not None and k.available("cuda")]


def _ce_step(batch: LossInputs, impl: str) -> Callable[[], None]:
    options = LossOptions(ce_impl=impl)
    return lambda: ce_loss(batch, options)["loss"].backward()


def bench_losses(quick: bool) -> list[Row]:
    rows: list[Row] = []
    d = 768
    for k in (8192,) if quick else (16384, 65536):
        g = torch.Generator(device=DEV).manual_seed(0)
        h = torch.randn(k, d, device=DEV, generator=g).requires_grad_()
        e = (0.05 * torch.randn(k, d, device=DEV, generator=g)).requires_grad_()
        impls = ["plain", "chunked", "recompute", *_externals()]
        if k > 16384:
            impls.remove("plain")  # [K, K] fp32 scores and their gradients: tens of GiB
        fns = {i: (lambda i=i, h=h, e=e: cwt_loss(h, e, impl=i).backward()) for i in impls}
        t = interleaved({i: _timed(f) for i, f in fns.items()}, warmup=2, reps=5)
        flops = 3 * 2.0 * k * k * d
        at_k: list[Row] = []
        for i in impls:
            at_k.append(Row(f"cuda cwt K={k} D={d} {i}: ms/step", 1000 * t.best[i], "ms"))
            at_k.append(Row(f"cuda cwt K={k} {i}: TFLOP/s", flops / t.best[i] / 1e12, "TFLOP/s"))
            at_k.append(Row(f"cuda cwt K={k} {i}: peak extra memory", cuda_peak_mb(fns[i]), "MiB"))
        rows += _logged([*at_k, spread_row(f"cuda cwt K={k}", t)])
    # vanilla CE at the masked positions of a bert-base batch (256 x 128 x 15%), V = 50k
    k, v = (2048, 50_304) if quick else (4915, 50_304)
    g = torch.Generator(device=DEV).manual_seed(0)
    h = torch.randn(k, d, device=DEV, generator=g).requires_grad_()
    w = (0.05 * torch.randn(v, d, device=DEV, generator=g)).requires_grad_()
    bias = torch.zeros(v, device=DEV, requires_grad=True)
    y = torch.randint(0, v, (k,), device=DEV, generator=g)
    head = VocabHead(transform=lambda x: x, weight=w, bias=bias)
    batch = LossInputs(hidden=h, targets=y, input_embeddings=torch.nn.Embedding(1, 1), head=head)
    ce_impls = ["plain", "chunked", *_externals()]
    ce_fns = {i: _ce_step(batch, i) for i in ce_impls}
    t = interleaved({i: _timed(f) for i, f in ce_fns.items()}, warmup=2, reps=5)
    ce_rows: list[Row] = []
    for i in ce_impls:
        ce_rows.append(Row(f"cuda ce K={k} V={v} {i}: ms/step", 1000 * t.best[i], "ms"))
        ce_rows.append(
            Row(f"cuda ce K={k} V={v} {i}: peak extra memory", cuda_peak_mb(ce_fns[i]), "MiB")
        )
    return rows + _logged(ce_rows)


def _memory_row(tag: str, s: Stepper) -> Row:
    """The step's peak memory above what it held before; none for CUDA graphs, whose replay
    allocates nothing (their memory is taken at capture, out of a private pool), so the
    per-step peak would read as almost zero."""
    if s.variant.cuda_graphs:
        return Row(f"{tag}: peak memory of a step: not measured (CUDA graphs)", 0.0, "info")
    return Row(f"{tag}: peak memory of a step", cuda_peak_mb(s.step), "MiB")


def _step_rows(
    tag: str, preset: str, vocab: int, batch: int, seq: int, configs: dict[str, Variant]
) -> tuple[list[Row], dict[str, float], dict[str, Stepper]]:
    st = steppers(preset, vocab, batch, seq, configs, device="cuda", bf16=True)
    t = interleaved({k: s.step for k, s in st.items()}, warmup=2, reps=5)
    rows = []
    for name, s in st.items():
        rows += [
            Row(f"{tag} {name}: ms/step", 1000 * t.best[name], "ms"),
            Row(f"{tag} {name}: tokens/s", batch * seq / t.best[name], "tok/s"),
            Row(f"{tag} {name}: TFLOP/s", s.flops / t.best[name] / 1e12, "TFLOP/s"),
            _memory_row(f"{tag} {name}", s),
        ]
    rows.append(spread_row(tag, t))
    return _logged(rows), t.best, st


def larger_step(preset: str, bf16_peak: float, batch: int = 256) -> list[Row]:
    """The step at 4x the batch (bert-base: 256 x 128 = 32k tokens a step): kernel launches
    and element-wise work spread over larger matrix products, the headless MFU its goal (0.40)
    asks of a GPU step, eager and compiled, beside the eager vanilla step."""
    tag = f"cuda {preset} V=50k b={batch} s=128 bf16"
    configs = {
        "vanilla": variant("ce"),
        "headless": variant("cwt"),
        "headless-compiled": variant("cwt", compile=True),
    }
    rows, best, st = _step_rows(tag, preset, 50_304, batch, 128, configs)
    head = min(best["headless"], best["headless-compiled"])
    mfu = st["headless"].flops / head / bf16_peak
    extra = [
        Row(f"{tag}: headless MFU (bf16 roofline)", mfu, "x"),
        Row(
            f"{tag}: speed-up of the faster headless step over eager vanilla",
            best["vanilla"] / head,
            "x",
        ),
    ]
    return rows + _logged(extra)


def graphed_step(preset: str, bf16_peak: float, batch: int = 256) -> list[Row]:
    """The larger step compiled in torch.compile's "reduce-overhead" mode: its kernels replayed
    as one CUDA graph, so no launch waits on the Python side. Alone, after `larger_step`: its
    compilation (the graph capture included) is the slowest of the benchmark, and a budget
    that cuts it off leaves the rows before it."""
    tag = f"cuda {preset} V=50k b={batch} s=128 bf16"
    name = "headless-compiled-cuda-graphs"
    graphed = {name: variant("cwt", compile=True, cuda_graphs=True)}
    try:
        rows, best, st = _step_rows(tag, preset, 50_304, batch, 128, graphed)
    except RuntimeError as exc:  # dynamo's and inductor's errors; the rows after it still run
        log.warning("%s %s: %s: %s", tag, name, type(exc).__name__, str(exc)[:500])
        return _logged([Row(f"{tag} {name}: failed ({type(exc).__name__})", 0.0, "info")])
    mfu = st[name].flops / best[name] / bf16_peak
    return rows + _logged([Row(f"{tag}: {name} MFU (bf16 roofline)", mfu, "x")])


def mfu_steps(bf16_peak: float, preset: str = "bert-base") -> list[Row]:
    """The steps the MFU goal asks for (`--only mfu`): the larger step, then it as CUDA graphs."""
    return larger_step(preset, bf16_peak) + graphed_step(preset, bf16_peak)


def bench_steps(quick: bool, bf16_peak: float, larger: bool = True) -> list[Row]:
    """The step comparisons; `larger` adds `mfu_steps` after the bert-base table (never when
    `quick`)."""
    ext = _externals()
    enc: dict[str, Variant] = {
        "hf-default": variant("ce", hf_default=True),
        "vanilla": variant("ce"),
        "vanilla-chunked": variant("ce", loss=LossOptions(ce_impl="chunked")),
        **{f"vanilla-{x}": variant("ce", loss=LossOptions(ce_impl=x)) for x in ext},
        "headless": variant("cwt"),
        "headless-sparse": variant("cwt", sparse_embeddings=True),
        "vanilla-compiled": variant("ce", compile=True),
        "headless-compiled": variant("cwt", compile=True),
    }
    preset, batch = ("bert-small", 32) if quick else ("bert-base", 64)
    tag = f"cuda {preset} V=50k b={batch} s=128 bf16"
    rows, best, st = _step_rows(tag, preset, 50_304, batch, 128, enc)
    fair = min(v for k, v in best.items() if k.startswith("vanilla"))
    head = min(best["headless"], best["headless-sparse"], best["headless-compiled"])
    pred = st["vanilla"].flops / st["headless"].flops
    rows += _logged(
        [
            Row(f"{tag}: headless speed-up over hf-default", best["hf-default"] / head, "x"),
            Row(f"{tag}: headless speed-up over the fastest vanilla", fair / head, "x"),
            Row(f"{tag}: FLOP-predicted speed-up over vanilla", pred, "x"),
            Row(
                f"{tag}: headless MFU (bf16 roofline)", st["headless"].flops / head / bf16_peak, "x"
            ),
            Row(f"{tag}: headless speed-up / FLOP-predicted", fair / head / pred, "x"),
            Row(
                f"{tag}: torch.compile speed-up of headless",
                best["headless"] / best["headless-compiled"],
                "x",
            ),
        ]
    )
    if larger and not quick:
        rows += mfu_steps(bf16_peak, preset)
    dec: dict[str, Variant] = {
        "vanilla": variant("ce"),
        **{f"vanilla-{x}": variant("ce", loss=LossOptions(ce_impl=x)) for x in ext},
        "headless": variant("cwt"),
        "vanilla-compiled": variant("ce", compile=True),
        "headless-compiled": variant("cwt", compile=True),
    }
    dbatch = 4 if quick else 16
    dtag = f"cuda pythia-70m V=50k b={dbatch} s=512 bf16"
    drows, dbest, dst = _step_rows(dtag, "pythia-70m", 50_304, dbatch, 512, dec)
    dfair = min(v for k, v in dbest.items() if k.startswith("vanilla"))
    dhead = min(dbest["headless"], dbest["headless-compiled"])
    dpred = dst["vanilla"].flops / dst["headless"].flops
    dmfu = dst["headless"].flops / dhead / bf16_peak
    rows += drows + _logged(
        [
            Row(f"{dtag}: headless speed-up over the fastest vanilla", dfair / dhead, "x"),
            Row(f"{dtag}: FLOP-predicted speed-up", dpred, "x"),
            Row(f"{dtag}: headless speed-up / FLOP-predicted", dfair / dhead / dpred, "x"),
            Row(f"{dtag}: headless MFU (bf16 roofline)", dmfu, "x"),
        ]
    )
    flat: dict[str, Variant] = {
        f"V={v}": variant("cwt", sparse_embeddings=True) for v in (8_000, 120_000)
    }
    ftimes: dict[str, float] = {}
    for name, c in flat.items():
        vocab = int(name.split("=")[1])
        _, b, _ = _step_rows(
            f"cuda {preset} headless-sparse {name}", preset, vocab, batch, 128, {name: c}
        )
        ftimes[name] = b[name]
    ratio = ftimes["V=120000"] / ftimes["V=8000"]
    return rows + _logged(
        [Row(f"cuda {preset} headless-sparse step time V=120k / V=8k", ratio, "x")]
    )


def run_cuda_bench(quick: bool = False, parts: tuple[str, ...] = ("cwt", "steps")) -> list[Row]:
    if not torch.cuda.is_available():
        from zoo.errors import UserError

        raise UserError("hlm bench --device cuda: torch sees no CUDA device here")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 (torch's default)
    torch.manual_seed(0)
    bf16 = mm_roofline(torch.bfloat16)
    rows = [
        Row(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}", 1.0, "info"),
        Row("cuda bf16 torch.mm 8192^3 roofline", bf16 / 1e12, "TFLOP/s"),
        Row("cuda fp32 torch.mm 8192^3 roofline", mm_roofline(torch.float32) / 1e12, "TFLOP/s"),
        Row("cuda kernels installed: " + (", ".join(_externals()) or "none"), 1.0, "info"),
    ]
    _logged(rows)
    if "mfu" in parts:  # first: the goal's steps alone fit a short lease
        rows += mfu_steps(bf16)
    if "steps" in parts:  # then the training steps' comparisons (the larger ones once)
        rows += bench_steps(quick, bf16, larger="mfu" not in parts)
    if "cwt" in parts:
        rows += bench_losses(quick)
    return rows
