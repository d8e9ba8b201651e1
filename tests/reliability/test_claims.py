"""Cell claims: a live run's claim is respected, a dead run's is taken over."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.run.claims import CLAIMS, claimed, try_claim


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
        assert mine and (tmp_path / CLAIMS / "dead").read_text() == str(os.getpid())
    assert not (tmp_path / CLAIMS / "dead").exists()  # released
    with claimed(tmp_path, "new") as mine:
        assert mine
