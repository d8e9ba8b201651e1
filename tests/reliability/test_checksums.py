"""Checkpoints carry checksums (the commit marker, written last): `--resume` falls back to the
newest checkpoint that verifies and says which it skipped and why; `hlm run` makes a damaged
cached `final/` again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.run.runner import run_suite
from tests.harness.conftest import TINY
from zoo.errors import UserError
from zoo.train.atomic import COMMIT, checkpoint_problem
from zoo.train.config import PretrainConfig
from zoo.train.layout import list_checkpoints
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain

RUN = dict(
    batch_size=4, seq_len=32, vocab_size=400, corpus=["synthetic:300"], progress=False, save_every=2
)


def _garbage(f: Path) -> None:
    """4 KB of finite-looking bytes in the middle of the file: same size, other content."""
    data = bytearray(f.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = b"\x00\x00\x80\x3f" * 1024  # float32 1.0
    f.write_bytes(bytes(data))


DAMAGES = {
    "truncated weights": lambda c: (c / "model.safetensors").write_bytes(
        (c / "model.safetensors").read_bytes()[:999]
    ),
    "truncated state": lambda c: (c / "training_state.json").write_bytes(b"{"),
    "finite garbage": lambda c: _garbage(c / "model.safetensors"),
    "no marker": lambda c: (c / COMMIT).unlink(),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_resume_falls_back_to_the_newest_verified_checkpoint(tmp_path: Path, damage: str) -> None:
    cfg = PretrainConfig(
        preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "r"), steps=5, **RUN
    )
    pretrain(cfg)
    _, step4 = list_checkpoints(tmp_path / "r")
    assert (
        checkpoint_problem(step4) is None and checkpoint_problem(tmp_path / "r" / "final") is None
    )
    DAMAGES[damage](step4)
    assert checkpoint_problem(step4) is not None
    with pytest.warns(UserWarning, match=rf"--resume: skipped {step4}: "):
        final = pretrain(cfg.model_copy(update={"steps": 6}), resume=True)
    assert read_metadata(final).steps == 6
    assert [r.step for r in read_metadata(final).resumed] == [2]  # continued from step 2


def test_no_verified_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    cfg = PretrainConfig(
        preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "r"), steps=3, **RUN
    )
    pretrain(cfg)
    (only,) = list_checkpoints(tmp_path / "r")
    os.remove(only / COMMIT)
    with pytest.raises(UserError, match=rf"no checkpoint verifies: {only}: no {COMMIT}"):
        pretrain(cfg.model_copy(update={"steps": 4}), resume=True)


def test_hlm_run_makes_a_damaged_cached_final_again(isolated: Path) -> None:
    lb = isolated / "lb"
    run_suite(TINY, root=lb, progress=False)
    final = next((isolated / "runs" / "pretrain").glob("*/final"))
    _garbage(final / "model.safetensors")
    for f in (lb / "tiny").glob("*.parquet"):
        f.unlink()  # every cell computed again: their checkpoints are read again
    with pytest.warns(
        UserWarning, match=rf"{final}: model.safetensors does not match its checksum"
    ):
        summary = run_suite(TINY, root=lb, progress=False)
    assert summary.failed == [] and checkpoint_problem(final) is None


def test_resume_from_a_named_checkpoint(tmp_path: Path) -> None:
    """`--resume PATH`: that checkpoint of the run, verified; a path that is none of its
    checkpoints, or one with newer checkpoints beside it, is refused by name."""
    out = tmp_path / "r"
    cfg = PretrainConfig(preset="pythia-tiny", objective="cwt", output_dir=str(out), steps=5, **RUN)
    pretrain(cfg)
    step2, step4 = list_checkpoints(out)
    longer = cfg.model_copy(update={"steps": 6})
    with pytest.raises(UserError, match=r"has newer checkpoints \(step-0*4\)"):
        pretrain(longer, resume=str(step2))
    with pytest.raises(UserError, match=rf"--resume {tmp_path}: not a checkpoint of {out}"):
        pretrain(longer, resume=str(tmp_path))
    final = pretrain(longer, resume=str(step4))
    assert [r.step for r in read_metadata(final).resumed] == [4]


def test_a_checkpoint_verified_once_is_verified_again_after_a_change(tmp_path: Path) -> None:
    """Loading hashes one of our checkpoints once (tasks reading it again skip the hashing);
    a file changed since, even to the same size, is hashed and refused."""
    from zoo.train.checkpoint import hf_config

    cfg = PretrainConfig(
        preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "r"), steps=2, **RUN
    )
    final = pretrain(cfg)
    hf_config(str(final))
    hf_config(str(final))  # remembered
    _garbage(final / "model.safetensors")
    with pytest.raises(UserError, match=r"model\.safetensors does not match its checksum"):
        hf_config(str(final))
