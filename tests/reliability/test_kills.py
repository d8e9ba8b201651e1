"""Crash consistency: `hlm pretrain` killed with SIGKILL at seeded moments (mid-step and
mid-save alike), resumed, killed again during the resumed run, and resumed to the end, gives
the very weights of a run never interrupted, bit for bit.

A kill lands at a moment chosen by progress (after the Nth metrics line, N seeded), then after
a seeded extra sleep, so some kills fall inside a checkpoint save. Each trial kills twice.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

from tests.tiny import TINY_RUN
from zoo.train.config import PretrainConfig
from zoo.train.layout import list_checkpoints
from zoo.train.pretrain import pretrain

TRIALS = 4
RUN = dict(preset="bert-tiny", objective="cwt", steps=14, save_every=1, **TINY_RUN)


def _lines(f: Path) -> int:
    return len(f.read_text().splitlines()) if f.is_file() else 0


def _start_and_kill(config: Path, out: Path, resume: bool, after: int, extra_s: float) -> bool:
    """Start `hlm pretrain`, SIGKILL it once `after` metrics lines more are written (then
    `extra_s` later); False when it finished first."""
    argv = [sys.executable, "-m", "harness.cli", "pretrain", "--config", str(config)]
    start = _lines(out / "metrics.jsonl")
    proc = subprocess.Popen(
        [*argv, *(["--resume"] if resume else [])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 240
    while proc.poll() is None and _lines(out / "metrics.jsonl") < start + after:
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the run made no progress in 240 s")
        time.sleep(0.01)
    time.sleep(extra_s)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def _finish(cfg: PretrainConfig, out: Path) -> Path:
    """Resume to the end; a run killed before its first checkpoint committed starts again."""
    return pretrain(cfg, resume=bool(list_checkpoints(out)))


@pytest.mark.slow
def test_killed_and_resumed_runs_equal_the_uninterrupted_run(tmp_path: Path) -> None:
    reference = pretrain(PretrainConfig(output_dir=str(tmp_path / "reference"), **RUN))
    want = load_file(str(reference / "model.safetensors"))
    rng = random.Random(0)
    kills = 0
    for trial in range(TRIALS):
        out = tmp_path / f"trial{trial}"
        cfg = PretrainConfig(output_dir=str(out), **RUN)
        config = tmp_path / f"trial{trial}.yaml"
        config.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
        first = _start_and_kill(config, out, False, rng.randint(1, 6), rng.uniform(0, 0.05))
        second = first and _start_and_kill(
            config, out, bool(list_checkpoints(out)), rng.randint(1, 5), rng.uniform(0, 0.05)
        )
        kills += first + second
        got = load_file(str(_finish(cfg, out) / "model.safetensors"))
        assert got.keys() == want.keys()
        for name, tensor in want.items():
            assert torch.equal(got[name], tensor), f"trial {trial}: {name} differs"
    assert kills >= TRIALS  # the kills happened, and the resumed runs were checked
