"""A publish copies only its manifest: links, devices, FIFOs and dropped-in files stay out,
weights linked from elsewhere are refused, the output never lies among the inputs, and a
killed publish blocks no rerun."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from harness.publish.hub import publish_leaderboard, publish_model
from harness.publish.manifest import stage_folder
from zoo.errors import UserError

SECRET = b"-----BEGIN PRIVATE KEY----- not for the Hub"


def _secret(tmp_path: Path) -> Path:
    key = tmp_path / "outside" / "id_rsa"
    key.parent.mkdir()
    key.write_bytes(SECRET)
    return key


def _device(path: Path) -> None:
    """A character device (/dev/null's numbers) where the test may make one, else a link to
    one: either way a publish must copy nothing from it."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        path.symlink_to("/dev/zero")


def _plant(folder: Path, key: Path) -> None:
    (folder / "id_rsa").symlink_to(key)  # a private file linked in
    os.mkfifo(folder / "notes.fifo")  # would block a reader forever
    _device(folder / "zero.bin")  # would never end
    (folder / "dropped.txt").write_text("someone's file")  # not written by the save


def _everything(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_a_checkpoint_publish_copies_no_link_device_or_fifo(trained, tmp_path, caplog) -> None:
    root, ckpt = trained
    run = tmp_path / "runs" / ckpt.parent.name
    shutil.copytree(ckpt, run / "final")
    key = _secret(tmp_path)
    _plant(run / "final", key)
    out = tmp_path / "out"
    publish_model(run / "final", "tester/m", dry_run=out, leaderboards=root / "lb")
    files = _everything(out)
    assert not {"id_rsa", "notes.fifo", "zero.bin", "dropped.txt"} & set(files)
    assert all(SECRET not in data for data in files.values())
    assert {"config.json", "model.safetensors", "hlm_commit.json", "README.md"} <= set(files)
    assert not any(p.is_symlink() for p in out.rglob("*"))
    said = caplog.text
    assert "left out of the publish" in said and "id_rsa" in said and "notes.fifo" in said
    assert "hlm_commit.json" not in said  # the copy's own marker is written, never left out


def test_weights_linked_from_outside_are_refused(trained, tmp_path) -> None:
    root, ckpt = trained
    final = tmp_path / "runs" / ckpt.parent.name / "final"
    shutil.copytree(ckpt, final)
    elsewhere = tmp_path / "elsewhere.safetensors"
    (final / "model.safetensors").rename(elsewhere)
    (final / "model.safetensors").symlink_to(elsewhere)
    with pytest.raises(UserError, match=r"model.safetensors: a checkpoint file is a link"):
        publish_model(final, "tester/m", dry_run=tmp_path / "out", leaderboards=root / "lb")
    assert not (tmp_path / "out").exists()


def test_a_leaderboard_publish_copies_only_its_rows_record_and_named_plugins(
    trained, tmp_path
) -> None:
    root, _ = trained
    lb = tmp_path / "lb"
    shutil.copytree(root / "lb", lb)
    board = next(p for p in lb.iterdir() if p.is_dir())
    key = _secret(tmp_path)
    _plant(board, key)
    plugins = board / "_plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "stolen.py").symlink_to(key)  # not named by _suite.yaml, and a link
    os.mkfifo(plugins / "pipe.py")
    out = tmp_path / "out"
    publish_leaderboard(board.name, "tester/lb", dry_run=out, leaderboards=lb)
    files = _everything(out)
    assert all(SECRET not in data for data in files.values())
    assert not [f for f in files if f.startswith("_plugins/")]
    assert "suite.yaml" in files and any(f.startswith("data/final/") for f in files)
    assert not any(p.is_symlink() for p in out.rglob("*"))


def test_a_linked_suite_record_or_named_plugin_is_refused(trained, tmp_path) -> None:
    root, _ = trained
    lb = tmp_path / "lb"
    shutil.copytree(root / "lb", lb)
    board = next(p for p in lb.iterdir() if p.is_dir())
    record = board / "_suite.yaml"
    text = record.read_text()
    (tmp_path / "real.yaml").write_text(text)
    record.unlink()
    record.symlink_to(tmp_path / "real.yaml")
    with pytest.raises(UserError, match=r"_suite.yaml: the suite record is a link"):
        publish_leaderboard(board.name, "tester/lb", dry_run=tmp_path / "o1", leaderboards=lb)
    record.unlink()
    record.write_text(text.replace("plugins: []", "plugins: [_plugins/key.py]"))
    (board / "_plugins").mkdir(exist_ok=True)
    (board / "_plugins" / "key.py").symlink_to(_secret(tmp_path))
    with pytest.raises(UserError, match=r"key.py: a plugin file is a link"):
        publish_leaderboard(board.name, "tester/lb", dry_run=tmp_path / "o2", leaderboards=lb)
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


@pytest.mark.parametrize("where", ["inside", "holding"])
def test_the_output_never_lies_among_the_inputs(trained, tmp_path, where: str) -> None:
    root, ckpt = trained
    final = tmp_path / "runs" / ckpt.parent.name / "final"
    shutil.copytree(ckpt, final)
    out = final / "upload" if where == "inside" else tmp_path  # tmp_path holds the checkpoint
    with pytest.raises(UserError, match="lies inside, or holds"):
        publish_model(final, "tester/m", dry_run=out, leaderboards=root / "lb")
    lb = tmp_path / "lb"
    shutil.copytree(root / "lb", lb)
    board = next(p for p in lb.iterdir() if p.is_dir())
    with pytest.raises(UserError, match="lies inside, or holds"):
        publish_leaderboard(board.name, "tester/lb", dry_run=board / "up", leaderboards=lb)


def test_a_killed_publish_leaves_nothing_that_blocks_a_rerun(tmp_path) -> None:
    out = tmp_path / "out"

    def killed(d: Path) -> None:
        (d / "half.bin").write_bytes(b"x")
        raise KeyboardInterrupt  # as a kill mid-copy

    with pytest.raises(KeyboardInterrupt):
        stage_folder(out, killed)
    assert not out.exists() and not list(tmp_path.iterdir())
    leftover = tmp_path / ".tmp-out-pid999999999"  # a SIGKILLed publish's half folder
    leftover.mkdir()
    (leftover / "half.bin").write_bytes(b"x")
    stage_folder(out, lambda d: (d / "whole.bin").write_bytes(b"y"))
    assert _everything(out) == {"whole.bin": b"y"} and not leftover.exists()


def test_a_step_checkpoint_publishes_no_training_state_and_verifies(trained, tmp_path) -> None:
    """An intermediate checkpoint leaves its scheduler and sharded optimizer state behind;
    the published folder's commit marker lists what it holds, so it verifies as saved."""
    from zoo.train.atomic import checkpoint_problem

    root, ckpt = trained
    step = next(iter(sorted(ckpt.parent.glob("checkpoints/step-*"))))
    assert (step / "training_state.json").is_file() and (step / "sharded").is_dir()
    run = tmp_path / "runs" / ckpt.parent.name / "checkpoints"
    shutil.copytree(step, run / step.name)
    out = tmp_path / "out"
    publish_model(run / step.name, "tester/step", dry_run=out, leaderboards=root / "lb")
    files = _everything(out)
    assert "training_state.json" not in files and not [f for f in files if "sharded" in f]
    assert checkpoint_problem(out) is None
