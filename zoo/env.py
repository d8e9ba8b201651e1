"""Environment variables set for one block and restored after it, however it ends.

    with env_set("HLM_DATA_ROOT", "/data"):
        ...   # child processes and readers of os.environ see it here, not after

Used where a setting must reach code that reads the environment (lm-eval's task loaders, the
plugin trust check) without outliving the work it is for.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def env_set(name: str, value: str) -> Iterator[None]:
    """`name` set to `value` within the block; its earlier value (or its absence) after."""
    before = os.environ[name] if name in os.environ else None
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before
