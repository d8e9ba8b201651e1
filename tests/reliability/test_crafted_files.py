"""A crafted checkpoint runs no code: a pickle whose unpickling would write a file, planted in
every file a resume or an evaluation reads (with a commit marker that matches it, since the
sender writes that too), ends in a clean error and writes nothing."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import pytest

from harness.cli import main as hlm
from tests.tiny import TINY_RUN
from zoo.errors import UserError
from zoo.train.atomic import write_commit
from zoo.train.config import PretrainConfig
from zoo.train.layout import LEGACY_STATE, STATE, list_checkpoints
from zoo.train.pretrain import pretrain

PWNED = "hlm-pwned"


class _Payload:
    """Unpickled, it would create a file named PWNED in the working directory."""

    def __reduce__(self):
        return (os.system, (f"touch {PWNED}",))


def _evil() -> bytes:
    return pickle.dumps(_Payload())


@pytest.fixture(scope="module")
def started(tmp_path_factory) -> tuple[PretrainConfig, Path]:
    root = tmp_path_factory.mktemp("crafted")
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="cwt",
        output_dir=str(root / "r"),
        steps=4,
        save_every=2,
        **TINY_RUN,
    )
    pretrain(cfg)
    return cfg, root


def _copy(started: tuple[PretrainConfig, Path], tmp_path: Path) -> tuple[PretrainConfig, Path]:
    cfg, root = started
    out = tmp_path / "r"
    shutil.copytree(root / "r", out)
    return cfg.model_copy(update={"output_dir": str(out), "steps": 6}), out


def _plant(checkpoint: Path, name: str) -> None:
    target = checkpoint / name
    if name == LEGACY_STATE:
        (checkpoint / STATE).unlink()  # a folder as an older version wrote it
    target.write_bytes(_evil())
    write_commit(checkpoint)  # the sender's marker matches what it sent


# torch notes the crafted file's pickle protocol (4, not torch.save's 2) before refusing it
@pytest.mark.filterwarnings("ignore:Detected pickle protocol 4:UserWarning")
@pytest.mark.parametrize("name", [LEGACY_STATE, "sharded/.metadata", "sharded/__0_0.distcp"])
def test_resume_refuses_a_crafted_pickle_and_runs_nothing(
    started, tmp_path: Path, monkeypatch, name: str
) -> None:
    cfg, out = _copy(started, tmp_path)
    monkeypatch.chdir(tmp_path)
    (checkpoint,) = list_checkpoints(out)
    _plant(checkpoint, name)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    with pytest.raises(UserError) as info:
        pretrain(cfg, resume=True)
    assert not (tmp_path / PWNED).exists(), "the planted pickle ran"
    assert str(checkpoint) in str(info.value) or name in str(info.value)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing written


def test_the_cli_says_so_with_exit_2(started, tmp_path: Path, monkeypatch, capsys) -> None:
    _, out = _copy(started, tmp_path)
    monkeypatch.chdir(tmp_path)
    (checkpoint,) = list_checkpoints(out)
    _plant(checkpoint, "sharded/.metadata")
    config = out / "config.yaml"
    code = hlm(
        ["pretrain", "--config", str(config), "--output-dir", str(out), "--steps", "6", "--resume"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and not (tmp_path / PWNED).exists()
    assert "refused to read: it names posix.system" in err or "refused to read" in err


def test_an_evaluation_never_unpickles_a_planted_weights_file(
    started, tmp_path: Path, monkeypatch
) -> None:
    """A `pytorch_model.bin` beside the safetensors: loading reads the safetensors, and a
    .bin alone is read with weights_only (transformers' default), which refuses code."""
    from zoo.train.checkpoint import load_model

    _, out = _copy(started, tmp_path)
    monkeypatch.chdir(tmp_path)
    final = out / "final"
    (final / "pytorch_model.bin").write_bytes(_evil())
    load_model(str(final))
    (final / "model.safetensors").unlink()
    with pytest.raises((OSError, RuntimeError, UserError, pickle.UnpicklingError)):
        load_model(str(final))  # transformers' weights_only load refuses the payload
    assert not (tmp_path / PWNED).exists()
