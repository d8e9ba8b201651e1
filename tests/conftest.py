"""Shared fixtures: the local data root, tiny configs, a silent transformers."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path
from types import ModuleType

# No network in tests, as in CI: set before huggingface_hub / datasets read them at import.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# The token and tokenizer cache of this test session (subprocesses inherit it), not ~/.cache.
os.environ.setdefault("HLM_CACHE_DIR", tempfile.mkdtemp(prefix="hlm-test-cache-"))
# Under pytest-xdist (`make test` runs one worker per core) each worker and the processes it
# starts compute on one thread: two workers of two threads each on two cores would fight for
# them. Set before torch is imported, which reads it once.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", "1")

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
def trust_plugins(monkeypatch):
    """Code the suites and configs of a test name may run (`--trust-plugins`)."""
    from zoo.registry import TRUST_ENV

    monkeypatch.setenv(TRUST_ENV, "1")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Runs and leaderboards under tmp_path."""
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path


def hlm_imports(
    argv: list[str], cwd: Path = ROOT, watched: tuple[str, ...] = ("torch", "transformers")
) -> tuple[int, list[str], str]:
    """`hlm ARGV` in a fresh interpreter: its exit status, which of the `watched` packages it
    imported (torch and transformers unless told), and its stderr."""
    import json
    import subprocess
    import sys

    probe = (
        "import json, sys; from harness.cli import main; status = main(sys.argv[1:]); "
        f"loaded = sorted(m for m in {watched!r} if m in sys.modules); "
        "print('PROBE', json.dumps([status, loaded]), file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=cwd
    )
    lines = [line for line in out.stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, out.stderr[-2000:]
    status, loaded = json.loads(lines[-1].removeprefix("PROBE "))
    return status, loaded, out.stderr


def load_tool(name: str) -> ModuleType:
    """The Python script tools/NAME.py as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow end-to-end tests first, so that `make test`'s workers share them from the
    start instead of one worker finishing a four-minute test alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
