"""Which processor a run used: the CPU's model and matrix extensions (from /proc/cpuinfo) or
the GPU's name, so that a checkpoint, a leaderboard row and a benchmark table say where they
were computed.

    >>> processor("cpu")    # 'AMD EPYC 7B13', the 'model name' line of /proc/cpuinfo
    >>> processor("cuda")   # 'NVIDIA H100 80GB HBM3', torch's name for GPU 0
    >>> host()              # 'AMD EPYC 7B13, 2 cores; avx2', for a page made without torch

Only a GPU's name needs torch, which `processor` imports then: a command that reads
leaderboards (`hlm report`) describes its machine without loading it.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def processor(device_type: str) -> str:
    """The model of the processor behind `device_type` ('cpu' or 'cuda'): the GPU's name for
    cuda (the first visible one: every rank of a job sees the same kind here), else the CPU's."""
    if device_type == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    return cpu_info()[0]


def host(threads: int | None = None) -> str:
    """One line for this machine's CPU: its model, its cores (and the `threads` a library
    uses of them, where given) and which of `ISA_FLAGS` it has."""
    model, isa = cpu_info()
    has = ", ".join(isa) if isa else "none of " + "/".join(ISA_FLAGS)
    cores = f"{threads} threads of {os.cpu_count()} cores" if threads else f"{os.cpu_count()} cores"
    return f"{model}, {cores}; {has}"
