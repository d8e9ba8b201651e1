"""tools/compare-startup.sh: a line per command with its seconds at a revision and here, a
command that fails said as such, and a clear refusal of a revision that is not one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "tools" / "compare-startup.sh"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=ROOT,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _worktrees() -> list[str]:
    listing = subprocess.run(
        ["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return listing.stdout.splitlines()


def test_each_command_gets_its_seconds_at_the_revision_and_here() -> None:
    before = _worktrees()
    out = _run("HEAD", "2", "--", "--help", "no-such-verb")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1] == f"here: harness from {ROOT / 'harness'}"
    assert (
        lines[0].startswith("HEAD: harness from /")
        and lines[0] != f"HEAD: harness from {ROOT / 'harness'}"
    )
    lines = lines[2:]
    seconds = r"\d+\.\d\d \d+\.\d\d"
    assert re.fullmatch(rf"hlm --help \| HEAD: {seconds} \| here: {seconds}", lines[0]), lines
    assert lines[1] == "hlm no-such-verb | HEAD: failed failed | here: failed failed"
    assert len(lines) == 2
    assert _worktrees() == before  # the temporary worktree is gone


def test_a_revision_that_is_not_one_is_refused() -> None:
    out = _run("no-such-revision", "--", "--help")
    assert out.returncode == 2 and "no-such-revision: not a revision" in out.stderr
    out = _run("HEAD", "zero", "--", "--help")
    assert out.returncode == 2 and "ROUNDS must be a positive whole number" in out.stderr
