"""A pretraining run stopped by SIGTERM or SIGINT saves the step in hand and resumes from it:
the resumed run ends with the very weights of a run never stopped, though no `save_every`
checkpoint was asked for; `hlm pretrain` exits 128 + the signal's number and says where the
checkpoint is; a second signal stops at once; a signal the process ignores stays ignored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from safetensors.torch import load_file

import zoo.train.loop as loop
from tests.tiny import TINY_RUN
from zoo.train.atomic import checkpoint_problem
from zoo.train.config import PretrainConfig
from zoo.train.interrupt import StopSignals, TrainingInterrupted
from zoo.train.layout import list_checkpoints
from zoo.train.pretrain import pretrain

RUN = dict(preset="bert-tiny", objective="cwt", steps=8, **TINY_RUN)  # no save_every


@pytest.fixture(autouse=True)
def _sigint_raises_keyboard_interrupt() -> Iterator[None]:
    """Python's own SIGINT handler for each test, whatever started pytest (a shell's `pytest &`
    starts it with SIGINT ignored)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _signal_at(monkeypatch: pytest.MonkeyPatch, signum: int, step: int) -> None:
    """Send `signum` to this process during training step `step` (counted from 1)."""
    real = loop.train_step

    def stepping(run: Any, *args: Any) -> dict[str, float]:
        logs = real(run, *args)
        if run.counters.step + 1 == step:
            signal.raise_signal(signum)
        return logs

    monkeypatch.setattr(loop, "train_step", stepping)


def _weights(final: Path) -> dict[str, torch.Tensor]:
    return load_file(str(final / "model.safetensors"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_run_saves_its_step_and_resumes_to_the_same_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    want = _weights(pretrain(PretrainConfig(output_dir=str(tmp_path / "reference"), **RUN)))
    cfg = PretrainConfig(output_dir=str(tmp_path / "stopped"), **RUN)
    before = signal.getsignal(signum)
    _signal_at(monkeypatch, signum, 3)
    with pytest.raises(TrainingInterrupted, match="stopped at step 3 with its checkpoint") as info:
        pretrain(cfg)
    assert signal.getsignal(signum) == before  # the handler is put back
    assert info.value.exit_status == 128 + signum
    (saved,) = list_checkpoints(tmp_path / "stopped")
    assert saved.name == "step-0000003" and checkpoint_problem(saved) is None
    assert info.value.checkpoint == str(saved)
    assert not (tmp_path / "stopped" / "final").exists()
    monkeypatch.undo()
    got = _weights(pretrain(cfg, resume=True))
    assert got.keys() == want.keys()
    for name, tensor in want.items():
        assert torch.equal(got[name], tensor), name


def test_a_signal_at_a_step_already_saved_writes_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = PretrainConfig(output_dir=str(tmp_path / "r"), **{**RUN, "save_every": 2})
    _signal_at(monkeypatch, signal.SIGTERM, 4)
    with pytest.raises(TrainingInterrupted, match="step 4"):
        pretrain(cfg)
    assert [p.name for p in list_checkpoints(tmp_path / "r")] == ["step-0000002", "step-0000004"]


def test_a_second_signal_stops_at_once() -> None:
    with StopSignals() as signals, pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
        assert signals.received == signal.SIGINT  # the first one is only recorded
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_the_process_ignores_stays_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with StopSignals() as signals:
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)
        assert signals.received is None
    _signal_at(monkeypatch, signal.SIGINT, 3)
    final = pretrain(PretrainConfig(output_dir=str(tmp_path / "r"), **RUN))  # runs to the end
    assert final.name == "final" and not list_checkpoints(tmp_path / "r")
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def _lines(f: Path) -> int:
    return len(f.read_text().splitlines()) if f.is_file() else 0


@pytest.mark.slow
def test_hlm_pretrain_on_sigterm_exits_143_with_a_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "r"
    cfg = PretrainConfig(output_dir=str(out), **{**RUN, "steps": 400})
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    argv = [sys.executable, "-m", "harness.cli", "pretrain", "--config", str(config)]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    deadline = time.monotonic() + 240
    while proc.poll() is None and _lines(out / "metrics.jsonl") < 3:
        assert time.monotonic() < deadline, "no progress in 240 s"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "SIGTERM: stopped at step" in stderr and "--resume" in stderr
    (saved,) = list_checkpoints(out)
    assert checkpoint_problem(saved) is None
    done = subprocess.run([*argv, "--resume"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (out / "final" / "model.safetensors").is_file()
