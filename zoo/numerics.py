"""Process-wide floating-point settings, scoped.

`torch.set_flush_denormal` changes the CPU's FTZ/DAZ flags for the whole thread (Python's own
float arithmetic included) and torch has no getter; `flush_denormal(True)` sets the flag for a
block of work and restores what was there before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


def denormals_flushed() -> bool:
    """Whether denormal floats are currently flushed to zero (probed, not remembered)."""
    tiny = torch.tensor([1e-40], dtype=torch.float32)  # a float32 denormal
    return bool((tiny * 1.0)[0] == 0.0)


@contextmanager
def flush_denormal(enabled: bool = True) -> Iterator[None]:
    before = denormals_flushed()
    torch.set_flush_denormal(enabled)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)
