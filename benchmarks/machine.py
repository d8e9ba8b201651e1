"""Which machine a benchmark ran on: the CPU, the extensions its matrix products can use, and
its memory bandwidth, so that tables measured on different machines can be told apart.

This project's CI machines change kind from one run to the next (an Intel Xeon with AMX, an
AMD EPYC without it), and the judged ratios move with them: the machines differ in how fast they
run memory-bound passes (the plain CWT loss over 1 GiB of scores, hf-default's [4096, 50k]
logits) relative to their matrix products, and bf16 products use AMX or AVX512-BF16 where
present. `hlm bench` prints these rows first; docs/PERFORMANCE.md compares the machines.
The CPU's model and extensions are read by `zoo.hardware`.
"""

from __future__ import annotations

import os
import time

import torch

from harness.bench.timing import Row
from zoo.hardware import host


def describe() -> str:
    """One line: model, cores torch uses, ISA extensions, torch version."""
    return f"{host(torch.get_num_threads())}; torch {torch.__version__}"


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
