"""What hlm prints: our INFO lines by default, none with -q (and no progress bar), debug lines
with -v; lm-eval's `git describe` no longer prints git's "fatal" outside a repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PRETRAIN = [
    "pretrain",
    "--preset",
    "bert-tiny",
    "--objective",
    "ce",
    "--corpus",
    "synthetic:200",
    "--vocab-size",
    "400",
    "--steps",
    "2",
    "--warmup-steps",
    "1",
    "--batch-size",
    "4",
    "--seq-len",
    "32",
]


def _hlm(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_default_quiet_and_verbose_output(tmp_path: Path) -> None:
    default = _hlm([*PRETRAIN, "--output-dir", str(tmp_path / "a")], tmp_path)
    assert default.returncode == 0, default.stderr
    assert "INFO zoo.train.pretrain: pretraining bert-tiny/ce on cpu x1: 2 steps" in default.stderr
    # stderr is a pipe here, as a log file would be: no bar (tqdm's auto mode), log lines only
    assert "it/s]" not in default.stderr and "\r" not in default.stderr
    quiet = _hlm([*PRETRAIN, "--output-dir", str(tmp_path / "b"), "-q"], tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert "checkpoint:" in quiet.stdout  # the result is still printed


def test_finetune_causal_quiet_prints_no_bar(tmp_path: Path, capsys) -> None:
    from harness.cli import main as hlm

    headless = [*PRETRAIN, "--preset", "pythia-tiny", "--objective", "cwt"]
    assert hlm([*headless, "--output-dir", str(tmp_path / "h"), "-q"]) == 0
    capsys.readouterr()
    final = str(tmp_path / "h" / "final")
    assert hlm(["finetune-causal", final, str(tmp_path / "ft"), "--steps", "2", "-q"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out == f"checkpoint: {tmp_path / 'ft' / 'final'}\n"


def test_a_warning_about_the_users_files_prints_on_one_line(tmp_path: Path) -> None:
    """As an error prints: the file and why, without the source line Python's warnings add;
    -q keeps it."""
    from harness.results.leaderboard import write_cell
    from tests.harness.results.test_leaderboard import row

    write_cell(tmp_path / "s", "good", [row("a", "val_loss", 1.0)])
    bad = write_cell(tmp_path / "s", "bad", [row("b", "val_loss", 2.0)])
    bad.write_bytes(bad.read_bytes()[:50])
    out = _hlm(["leaderboard", "s", "--leaderboards", str(tmp_path), "-q"], tmp_path)
    assert out.returncode == 0 and "| a " in out.stdout, out.stderr
    assert out.stderr.startswith(f"WARNING {bad}: skipped, not a readable Parquet file (")
    assert len(out.stderr.splitlines()) == 1, out.stderr


@pytest.mark.slow
def test_hlm_run_shows_no_bar_of_lm_evals(tiny_decoder: Path, tmp_path: Path) -> None:
    """`hlm run` shows no bar of lm-eval's in a log; `hlm evaluate` shows lm-eval's own, and
    neither prints git's complaint outside a repository."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: bars\nmodels:\n  - {checkpoint: " + str(tiny_decoder) + ", name: tiny}\n"
        "tasks:\n  - {type: lm_eval, params: {tasks: [hlm_boolq], limit: 4}}\n"
    )
    out = _hlm(["run", str(suite), "--leaderboards", str(tmp_path / "lb")], tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    # stderr is a pipe here, as a log file would be: no bar of ours (tqdm's auto mode) and
    # none of lm-eval's; on a terminal ours shows (tests/harness/run/test_runner.py)
    assert "bars: cells" not in out.stderr and "\r" not in out.stderr
    assert "Running loglikelihood requests" not in out.stderr and "fatal:" not in out.stderr
    shown = _hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--limit", "2"], tmp_path)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "Running loglikelihood requests" in shown.stderr  # ad hoc, lm-eval's own bars
    # run outside a git repository (tmp_path), lm-eval prints no "fatal:" of git's
    assert "fatal:" not in shown.stderr and "|hlm_boolq|" in shown.stdout.replace(" ", "")


LIBRARY_ENV = (
    "TRANSFORMERS_VERBOSITY",
    "DATASETS_VERBOSITY",
    "HF_HUB_VERBOSITY",
    "HF_HUB_DISABLE_PROGRESS_BARS",
    "HF_DATASETS_DISABLE_PROGRESS_BARS",
)


@pytest.mark.parametrize(("level", "verbosity", "bars"), [(0, 40, False), (2, 20, True)])
def test_settings_reach_the_libraries_imported_after(
    level: int, verbosity: int, bars: bool
) -> None:
    """`configure` runs before any verb imports transformers, datasets or huggingface_hub: the
    level and the bars still reach them (errors only and no bars by default; INFO and bars
    with -vv). huggingface_hub sets its logger's level when imported: its Hub retries once
    printed a warning line a second apart while the Hub was unreachable."""
    probe = (
        f"from harness.logs import configure; configure({level}); "
        "import datasets, transformers, huggingface_hub.utils.logging as hub; "
        "from datasets.utils.tqdm import are_progress_bars_disabled; "
        "print(transformers.utils.logging.get_verbosity(), "
        "transformers.utils.logging.is_progress_bar_enabled(), "
        "datasets.logging.get_verbosity(), not are_progress_bars_disabled(), "
        "hub.get_verbosity())"
    )
    env = {k: v for k, v in os.environ.items() if k not in LIBRARY_ENV}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        check=True,
    )
    expected = [str(verbosity), str(bars), str(verbosity), str(bars), str(verbosity)]
    assert out.stdout.split() == expected


@pytest.mark.parametrize(("rank", "said"), [(None, True), ("0", True), ("1", False)])
def test_only_rank_zero_says_what_it_does(monkeypatch, rank: str | None, said: bool) -> None:
    """Under torchrun every worker runs `hlm`: rank 0 prints our INFO lines, the others keep
    their warnings and errors only, so a line is said once, not once per rank."""
    import logging

    from harness.logs import configure

    if rank is None:
        monkeypatch.delenv("RANK", raising=False)
    else:
        monkeypatch.setenv("RANK", rank)
    before = {name: logging.getLogger(name).level for name in ("zoo", "harness")}
    try:
        configure(0)
        zoo = logging.getLogger("zoo")
        assert zoo.isEnabledFor(logging.INFO) is said and zoo.isEnabledFor(logging.WARNING)
    finally:  # the levels as they were, for the tests after
        for name, level in before.items():
            logging.getLogger(name).setLevel(level)


def test_a_librarys_own_bars_show_in_a_cell_only_on_a_terminal(monkeypatch) -> None:
    """lm-eval draws its request bars unasked: inside `hlm run`'s bar on a terminal they show
    (`harness.tasks.lm_eval_task` lets them through); in a log file, or outside a run, not."""
    import io

    from harness.logs import CELL_PROGRESS, cell_bars_on_terminal

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for in_run, stream, shown in (
        (True, Terminal(), True),
        (True, io.StringIO(), False),
        (False, Terminal(), False),
    ):
        monkeypatch.setattr(sys, "stderr", stream)
        token = CELL_PROGRESS.set(in_run)
        try:
            assert cell_bars_on_terminal() is shown
        finally:
            CELL_PROGRESS.reset(token)
