from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
TINY = HERE / "data" / "tiny.yaml"


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Runs and leaderboards under tmp_path."""
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path
