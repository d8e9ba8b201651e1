"""Peak resident memory of this process, measured soundly on Linux; and whether torch's
tensors land on transparent huge pages (`torch_huge_pages`).

`ru_maxrss` is unusable in a child process: Linux carries the parent's high-water mark across
fork + execve. Instead, `reset_peak()` writes "5" to /proc/self/clear_refs (resets VmHWM, the
peak RSS of this address space) and `peak_mb()` reads VmHWM from /proc/self/status.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def _status_kb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return float(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def rss_mb() -> float:
    return _status_kb("VmRSS") / 1024.0


def reset_peak() -> None:
    """Make the peak equal to the current RSS (Linux >= 4.0)."""
    Path("/proc/self/clear_refs").write_text("5")


def peak_mb() -> float:
    return _status_kb("VmHWM") / 1024.0


def torch_huge_pages() -> bool:
    """Whether torch's large CPU tensors land on transparent huge pages in this process
    (THP_MEM_ALLOC_ENABLE=1 before torch's first allocation, and THP not disabled)."""
    import torch

    def anon_huge_kb() -> float:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
            if line.startswith("AnonHugePages:"):
                return float(line.split()[1])
        return 0.0

    before = anon_huge_kb()
    x = torch.ones(16 * 2**20 // 4)  # 16 MiB, touched
    grown = anon_huge_kb() - before
    del x
    return grown >= 8 * 1024


def cuda_peak_mb(fn: Callable[[], Any]) -> float:
    """The caching allocator's peak over `fn()`, above what was allocated before it."""
    import torch  # the CUDA allocator's: where a GPU runs

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - before) / 2**20
