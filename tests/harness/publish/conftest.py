"""Fixtures of the publishing tests: the tiny suite run once for the package (checkpoints and
rows), and a loopback Hub (tests/harness/hubserver.py) the client may talk to."""

from __future__ import annotations

import json
import os

import pytest

from harness.run.runner import run_suite
from tests.harness.conftest import TINY
from tests.harness.hubserver import TOKEN, HubServer


@pytest.fixture(scope="package")
def trained(tmp_path_factory):
    """The tiny suite, run once: checkpoints in runs/, rows in lb/tiny."""
    root = tmp_path_factory.mktemp("pub")
    old = os.environ.get("HLM_RUNS_DIR")
    os.environ["HLM_RUNS_DIR"] = str(root / "runs")
    try:
        run_suite(TINY, root=root / "lb", progress=False)
    finally:
        if old is None:
            os.environ.pop("HLM_RUNS_DIR")
        else:
            os.environ["HLM_RUNS_DIR"] = old
    ckpt = next(
        p
        for p in sorted((root / "runs" / "pretrain").glob("*/final"))
        if json.loads((p / "hlm_metadata.json").read_text())["objective"] == "cwt"
    )
    return root, ckpt


def go_online(monkeypatch) -> None:
    """The tests run offline (conftest); the client reads HF_HUB_OFFLINE at import, so talking
    to the loopback Hub means lifting its offline flag for this test."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)


@pytest.fixture
def hub(monkeypatch):
    go_online(monkeypatch)
    with HubServer() as server:
        yield server
