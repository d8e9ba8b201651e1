"""Cell claims: a live run's claim is respected; a dead run's is taken over, as is one whose
pid another process reuses now, or another host's whose lease ran out."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from harness.run.claims import CLAIMS, LEASE_ENV, claimed, process_start, try_claim


def test_claims(tmp_path: Path) -> None:
    dead = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    (tmp_path / CLAIMS).mkdir()
    (tmp_path / CLAIMS / "live").write_text(str(os.getppid()))  # a live process (the parent)
    (tmp_path / CLAIMS / "dead").write_text(str(dead))  # a killed run's leftover
    assert not try_claim(tmp_path, "live")
    with claimed(tmp_path, "dead") as mine:
        assert mine and json.loads((tmp_path / CLAIMS / "dead").read_text())["pid"] == os.getpid()
    assert not (tmp_path / CLAIMS / "dead").exists()  # released
    with claimed(tmp_path, "new") as mine:
        assert mine


def _claim(host: str, pid: int, started: str | None, claimed_at: float) -> str:
    return json.dumps({"host": host, "pid": pid, "started": started, "claimed_at": claimed_at})


def test_a_reused_pid_does_not_hold_a_claim_forever(tmp_path: Path) -> None:
    """The parent is alive, but the claim says it started at another time: another process
    had that id, died, and the id was reused."""
    (tmp_path / CLAIMS).mkdir()
    parent, host = os.getppid(), socket.gethostname()
    (tmp_path / CLAIMS / "reused").write_text(_claim(host, parent, "1", time.time()))
    (tmp_path / CLAIMS / "alive").write_text(_claim(host, parent, process_start(parent), 0.0))
    assert try_claim(tmp_path, "reused")
    assert not try_claim(tmp_path, "alive")


def test_another_hosts_claim_lasts_its_lease(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / CLAIMS).mkdir()
    monkeypatch.setenv(LEASE_ENV, "3600")
    (tmp_path / CLAIMS / "fresh").write_text(_claim("elsewhere", 1, "5", time.time() - 60))
    (tmp_path / CLAIMS / "stale").write_text(_claim("elsewhere", 1, "5", time.time() - 7200))
    assert not try_claim(tmp_path, "fresh")
    assert try_claim(tmp_path, "stale")


def test_a_damaged_claim_is_taken_over_and_my_own_is_mine(tmp_path: Path) -> None:
    """A claim that does not parse (a run killed mid-write by an older version, a disk
    error) holds nothing; a cell this process claimed already is still its own."""
    (tmp_path / CLAIMS).mkdir()
    (tmp_path / CLAIMS / "torn").write_text('{"host": "x", "pid"')
    (tmp_path / CLAIMS / "wrong").write_text(json.dumps({"host": "x"}))
    assert try_claim(tmp_path, "torn") and try_claim(tmp_path, "wrong")
    assert json.loads((tmp_path / CLAIMS / "torn").read_text())["pid"] == os.getpid()
    assert try_claim(tmp_path, "torn")  # claimed again by its owner


WRITER = """
import json, os, sys, time
from pathlib import Path
from filelock import FileLock
from harness.run.claims import Owner
folder = Path(sys.argv[1])
with FileLock(folder / ".lock"):
    (folder / "cell").touch()  # created, not yet written: what a racing run could see
    time.sleep(1.0)
    (folder / "cell").write_text(json.dumps(Owner.me().__dict__))
time.sleep(30)
"""


def test_a_claim_being_written_is_not_taken_for_a_dead_ones(tmp_path: Path) -> None:
    """A run that finds a claim another run has created but not yet written waits for it
    (the claims' lock) instead of taking it over and computing the cell a second time."""
    folder = tmp_path / CLAIMS
    folder.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(folder)])
    try:
        deadline = time.time() + 60
        while not (folder / "cell").exists() and time.time() < deadline:
            time.sleep(0.01)
        assert (folder / "cell").exists()
        assert not try_claim(tmp_path, "cell")  # the writer is alive and holds it
        assert json.loads((folder / "cell").read_text())["pid"] == writer.pid
    finally:
        writer.kill()
        writer.wait()
