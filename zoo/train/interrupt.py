"""Stopping a pretraining run cleanly on SIGTERM or SIGINT: a checkpoint at the step in hand.

    with StopSignals() as signals:
        while training:
            ...one step...
            if signals.received is not None: save the step's checkpoint, raise TrainingInterrupted

A scheduler's pre-emption (SLURM sends SIGTERM; torchrun forwards it to every worker) or a
Ctrl-C would otherwise lose every step since the last `save_every` checkpoint. Inside
`zoo.train.loop.fit` the first signal only raises a flag: the loop finishes the step in hand,
every rank agrees to stop, the step's checkpoint is written with its training state, and
`TrainingInterrupted` ends the run; the CLI exits with 128 + the signal's number, and the same
command with `--resume` (or `hlm run` again) continues from there. A second signal stops at
once, as if no handler were installed.

Handlers are installed only from the main thread (Python allows no other) and the previous
ones are put back on leaving the block. A signal the process was started ignoring stays
ignored: a shell without job control starts `cmd &` with SIGINT ignored, so that a Ctrl-C
meant for the foreground command does not stop it, and a run must not undo that.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class TrainingInterrupted(KeyboardInterrupt):
    """A run stopped by a signal after saving `checkpoint`. A KeyboardInterrupt, so that no
    `except Exception` on the way (a suite runner's per-cell handler) carries on past it."""

    def __init__(self, signum: int, checkpoint: str, message: str) -> None:
        super().__init__(message)
        self.signum, self.checkpoint = signum, checkpoint

    @property
    def exit_status(self) -> int:
        """The shell's status for a process a signal ended: 128 + the signal's number."""
        return 128 + self.signum


class StopSignals:
    """Records the first SIGTERM / SIGINT received inside the block (`received`, its number);
    the second one gets the handler that was there before (SIGINT: KeyboardInterrupt;
    SIGTERM: the process ends)."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            handled = [s for s in SIGNALS if signal.getsignal(s) != signal.SIG_IGN]
            self._previous = {s: signal.signal(s, self._handle) for s in handled}
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._restore()

    def _restore(self) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
            return
        previous = self._previous[signum]
        self._restore()
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            signal.raise_signal(signum)
