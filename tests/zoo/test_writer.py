"""The one writer's three rules: a name from data stays inside its root, nothing is written
through a link or over what is not a regular file, and a write is all or nothing (a full
disk is one line and leaves the old file)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pandas as pd
import pytest

from harness.report.plots import make_plots
from tests.harness.results.test_leaderboard import row
from zoo.errors import UserError
from zoo.train.atomic import atomic_dir_write
from zoo.writer import WriteRefused, component, inside, replacing, write_text


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "x/../../out", "a\\b", "nul\0", "é" * 200])
def test_a_name_made_from_data_is_one_component(name: str) -> None:
    with pytest.raises(WriteRefused, match="cannot name a file"):
        component(name, "metric")
    assert component("curves-val_ppl.png", "metric") == "curves-val_ppl.png"


def test_a_folder_on_the_way_that_is_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "board").mkdir()
    (tmp_path / "board" / "_plots").symlink_to(elsewhere)
    with pytest.raises(WriteRefused, match="_plots: is a link"):
        inside(tmp_path / "board", "_plots", "x.png")


def test_never_through_a_link_nor_over_a_device_fifo_or_folder(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own")
    link = tmp_path / "report.html"
    link.symlink_to(victim)
    with pytest.raises(WriteRefused, match="is a link"):
        write_text(link, "page")
    assert victim.read_text() == "the user's own" and link.is_symlink()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "folder").mkdir()
    for target in (fifo, tmp_path / "folder", Path("/dev/null")):
        with pytest.raises(WriteRefused, match="not a regular file"):
            write_text(target, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_a_write_is_all_or_nothing_and_a_full_disk_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "rows.json"
    write_text(target, "old")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    full = pytest.raises(WriteRefused, match=r"rows.json: no space left on the device")
    with full, replacing(target) as tmp:
        tmp.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.json"]


def test_a_checkpoint_save_on_a_full_disk_is_one_line_and_keeps_nothing(tmp_path: Path) -> None:
    def save(folder: Path) -> None:  # as safetensors says it: another type, the cause in words
        (folder / "model.safetensors").write_bytes(b"half")
        raise RuntimeError(
            "Error while serializing: IoError(No space left on device (os error 28))"
        )

    with pytest.raises(UserError, match=r"step-3: no space left on the device"):
        atomic_dir_write(tmp_path / "step-3", save)
    assert list(tmp_path.iterdir()) == []


def test_a_metric_named_to_leave_the_folder_draws_inside_it(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        [row("cwt", "x/../../../../out/ESCAPED", v, step=s) for s, v in ((1, 2.0), (2, 1.0))]
    )
    out = tmp_path / "board" / "_plots"
    files = make_plots(rows, out)
    assert files and all(f.parent == out for f in files)
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        f.name for f in files
    )


def _board(tmp_path: Path) -> Path:
    from harness.results.leaderboard import write_cell

    board = tmp_path / "lb" / "s"
    rows = [row("m", "val_ppl", v, step=s, task="validation") for s, v in ((1, 9.0), (2, 8.0))]
    write_cell(board, "c1", rows)
    return board


def test_hlm_plot_never_writes_through_a_link_placed_in_its_folder(tmp_path: Path) -> None:
    from tests.reliability.test_bad_input import hlm

    board = _board(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own")
    (board / "_plots").mkdir()
    (board / "_plots" / "curves-validation-val_ppl.png").symlink_to(victim)
    rc, err = hlm("plot", "s", "--leaderboards", str(tmp_path / "lb"))
    assert rc == 2 and "is a link; the project never writes through one" in err, err
    assert victim.read_text() == "the user's own"


def test_hlm_report_never_replaces_a_device(tmp_path: Path) -> None:
    from tests.reliability.test_bad_input import hlm

    _board(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.html").symlink_to(os.devnull)
    lb = str(tmp_path / "lb")
    rc, err = hlm("report", "s", "--leaderboards", lb, "--output-dir", str(tmp_path / "out"))
    assert rc == 2 and "is a link; the project never writes through one" in err, err
    rc, err = hlm("report", "s", "--leaderboards", lb, "--output-dir", os.devnull)
    assert rc == 2 and os.devnull in err, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_the_suite_record_never_writes_through_a_link(tmp_path: Path) -> None:
    from harness.suite import load_suite
    from harness.suite.record import SUITE_FILE, write_suite_record

    victim = tmp_path / "victim.yaml"
    victim.write_text("the user's own")
    out = tmp_path / "lb"
    out.mkdir()
    (out / SUITE_FILE).symlink_to(victim)
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nmodels: [{preset: bert-tiny, objective: cwt}]\ntasks: [{type: validation}]\n"
    )
    with pytest.raises(WriteRefused, match="is a link"):
        write_suite_record(out, load_suite(suite))
    assert victim.read_text() == "the user's own"
