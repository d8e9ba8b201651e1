"""Which machine a benchmark ran on: the CPU, the extensions its matrix products can use, and
its memory bandwidth, so that tables measured on different machines can be told apart.

This project's CI machines change kind between sessions (an Intel Xeon with AMX, an AMD EPYC
without it), and the judged ratios move with them: the machines differ in how fast they run
memory-bound passes (the plain CWT loss over 1 GiB of scores, hf-default's [4096, 50k]
logits) relative to their matrix products, and bf16 products use AMX or AVX512-BF16 where
present. `hlm bench` prints these rows first; docs/PERFORMANCE.md compares the machines.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch

from harness.bench.timing import Row

# /proc/cpuinfo flags that decide how fast fp32 / bf16 matrix products run on x86
ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")


def cpu_info(cpuinfo: str | None = None) -> tuple[str, tuple[str, ...]]:
    """The CPU's model name and which of `ISA_FLAGS` it has, from /proc/cpuinfo (or the text
    given). ("unknown", ()) where there is none (not Linux)."""
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text() if path.exists() else ""
    model, flags = "unknown", set[str]()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model == "unknown":
            model = " ".join(value.split())
        elif key == "flags" and not flags:
            flags = set(value.split())
    return model, tuple(f for f in ISA_FLAGS if f in flags)


def describe() -> str:
    """One line: model, cores torch uses, ISA extensions, torch version."""
    model, isa = cpu_info()
    has = ", ".join(isa) if isa else "none of " + "/".join(ISA_FLAGS)
    return (
        f"{model}, {torch.get_num_threads()} threads of {os.cpu_count()} cores; {has}; "
        f"torch {torch.__version__}"
    )


def copy_bandwidth(mib: int = 256, reps: int = 5) -> float:
    """Best bytes/s (read + write) of copying a `mib` MiB fp32 tensor into a warm one: the
    speed of the memory-bound passes (softmax, element-wise steps) over tensors larger than
    the caches."""
    n = mib * 2**20 // 4
    src, dst = torch.ones(n), torch.empty(n)
    dst.copy_(src)  # fault the pages in
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t)
    return 2.0 * src.numel() * src.element_size() / best


def machine_rows() -> list[Row]:
    """The INFO rows that open `hlm bench`'s table."""
    return [
        Row(f"machine: {describe()}", float(os.cpu_count() or 0), "cores"),
        Row("memory bandwidth, warm 256 MiB copy (read + write)", copy_bandwidth() / 1e9, "GB/s"),
    ]
