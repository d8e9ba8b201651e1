"""Shared fixtures: the local data root, tiny configs, a silent transformers."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# No network in tests, as in CI: set before huggingface_hub / datasets read them at import.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# The token and tokenizer cache of this test session (subprocesses inherit it), not ~/.cache.
os.environ.setdefault("HLM_CACHE_DIR", tempfile.mkdtemp(prefix="hlm-test-cache-"))

import pytest
import transformers

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HLM_DATA_ROOT", ROOT.parent / "shared" / "data")).resolve()
os.environ["HLM_DATA_ROOT"] = str(DATA)
transformers.utils.logging.disable_progress_bar()
transformers.utils.logging.set_verbosity_error()


@pytest.fixture(scope="session")
def data_root() -> Path:
    if not (DATA / "MANIFEST.md").is_file():
        pytest.fail(f"real data not found at {DATA}: set HLM_DATA_ROOT (see README)")
    return DATA


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Runs and leaderboards under tmp_path."""
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path
