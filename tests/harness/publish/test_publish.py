"""Publishing against a loopback Hub (tests/harness/hubserver.py): upload, download back with
plain transformers / datasets, no new commit when unchanged, the token nowhere."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.publish.hub import publish_leaderboard, publish_model
from harness.results.leaderboard import read_leaderboard
from harness.run.runner import run_suite
from tests.harness.conftest import TINY
from tests.harness.hubserver import TOKEN, HubServer
from tests.harness.publish.conftest import go_online
from zoo.errors import UserError


def tree_digest(path: Path) -> dict[str, str]:
    return {
        str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(path.rglob("*"))
        if f.is_file()
    }


DOWNLOAD = """
import json, sys, torch
from transformers import AutoModel, AutoTokenizer
from datasets import load_dataset
model = AutoModel.from_pretrained(sys.argv[1])  # a headless encoder: its body alone
tok = AutoTokenizer.from_pretrained(sys.argv[1])
ds = load_dataset(sys.argv[2], split="train")
sd = {k: float(v.double().sum()) for k, v in model.state_dict().items()}
print(json.dumps({
    "sums": sd, "vocab": len(tok), "rows": ds.num_rows,
    "values": sorted(ds["value"]), "cols": ds.column_names,
}))
"""


def test_publish_model_and_leaderboard_then_download_back(trained, hub, tmp_path) -> None:
    root, ckpt = trained
    before = tree_digest(ckpt)
    commit = publish_model(ckpt, "tester/tiny-cwt", leaderboards=root / "lb", endpoint=hub.url)
    repo = hub.state.repos[("model", "tester/tiny-cwt")]
    files = repo.branches["main"]
    assert {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "hlm_metadata.json",
        "README.md",
    } <= set(files)
    assert "training_state.json" not in files
    card = files["README.md"].decode()
    assert "headless-lm" in card and "contrastive-weight-tying" in card
    assert 'AutoModel.from_pretrained("tester/tiny-cwt")' in card  # its body: nothing missing
    assert "val_loss" in card  # its leaderboard rows, as a table (no Hub dataset: no model-index)
    assert "https://github.com/)" not in card  # no placeholder link
    # unchanged re-publish: no new commit
    n_commits = len(repo.commits["main"])
    assert (
        publish_model(ckpt, "tester/tiny-cwt", leaderboards=root / "lb", endpoint=hub.url) == commit
    )
    assert len(repo.commits["main"]) == n_commits

    publish_leaderboard("tiny", "tester/tiny-lb", leaderboards=root / "lb", endpoint=hub.url)
    ds_files = hub.state.repos[("dataset", "tester/tiny-lb")].branches["main"]
    assert {"README.md", "suite.yaml"} <= set(ds_files)
    # one file per evaluated checkpoint: 4 validation cells at steps 3 and 6, 4 throughput cells
    assert sum(f.startswith("data/") and f.endswith(".parquet") for f in ds_files) == 12
    assert any(f.startswith("plots/") and f.endswith(".png") for f in ds_files)
    dcard = ds_files["README.md"].decode()
    assert "configs:" in dcard and "data/final/*.parquet" in dcard and "| `metric` |" in dcard
    assert "along_pretraining" in dcard and "data/steps/*.parquet" in dcard
    assert sum(f.startswith("data/steps/") for f in ds_files) == 4  # the step-3 validations

    # download with plain transformers / datasets from the same endpoint, in a clean process
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "HF_TOKEN": TOKEN,
    }
    out = subprocess.run(
        [sys.executable, "-c", DOWNLOAD, "tester/tiny-cwt", "tester/tiny-lb"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    from transformers import AutoModel

    local = AutoModel.from_pretrained(ckpt).state_dict()
    assert got["sums"] == pytest.approx({k: float(v.double().sum()) for k, v in local.items()})
    lb = read_leaderboard(root / "lb" / "tiny")
    final = lb[lb["final_checkpoint"]]  # the default config: what `hlm leaderboard` shows
    assert got["rows"] == len(final) < len(lb)
    assert got["values"] == pytest.approx(sorted(final["value"]))
    # the token went in headers only: nowhere in any uploaded byte, and local files untouched
    assert not any(TOKEN.encode() in body for body in hub.state.bodies)
    assert not any(
        TOKEN.encode() in v
        for r in hub.state.repos.values()
        for b in r.branches.values()
        for v in b.values()
    )
    assert tree_digest(ckpt) == before


def test_private_and_revision(trained, hub) -> None:
    root, ckpt = trained
    publish_model(
        ckpt, "tester/priv", private=True, revision="v1", leaderboards=root / "lb", endpoint=hub.url
    )
    repo = hub.state.repos[("model", "tester/priv")]
    assert repo.private and "model.safetensors" in repo.branches["v1"]


def test_dry_run_writes_exactly_the_uploaded_files(trained, hub, tmp_path) -> None:
    root, ckpt = trained
    dry = tmp_path / "dry"
    assert (
        hlm(
            [
                "publish",
                "model",
                str(ckpt),
                "--repo",
                "tester/dry",
                "--output-dir",
                str(dry),
                "--leaderboards",
                str(root / "lb"),
            ]
        )
        == 0
    )
    publish_model(ckpt, "tester/dry", leaderboards=root / "lb", endpoint=hub.url)
    uploaded = hub.state.repos[("model", "tester/dry")].branches["main"]
    assert {
        str(p.relative_to(dry)): p.read_bytes() for p in dry.rglob("*") if p.is_file()
    } == uploaded
    for f in dry.rglob("*"):
        if f.is_file():
            assert TOKEN.encode() not in f.read_bytes()


def test_failed_upload_is_clear_and_keeps_local_files(trained, monkeypatch, capsys) -> None:
    root, ckpt = trained
    go_online(monkeypatch)
    before = tree_digest(ckpt)
    with HubServer() as dead:
        url = dead.url  # closed when the block ends: nothing listens there any more
    with pytest.raises(UserError) as err:
        publish_model(ckpt, "tester/x", leaderboards=root / "lb", endpoint=url)
    msg = str(err.value)
    assert (
        "upload to tester/x failed" in msg
        and "nothing local was changed" in msg
        and "retry: hlm publish model" in msg
        and f"--endpoint {url}" in msg  # the retry goes to the same Hub
    )
    assert TOKEN not in msg
    assert tree_digest(ckpt) == before
    code = hlm(
        [
            "publish",
            "model",
            str(ckpt),
            "--repo",
            "tester/x",
            "--endpoint",
            url,
            "--leaderboards",
            str(root / "lb"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2 and TOKEN not in captured.err + captured.out


def test_bad_inputs(trained, tmp_path, monkeypatch) -> None:
    root, ckpt = trained
    with pytest.raises(UserError, match="not a checkpoint folder"):
        publish_model(tmp_path, "tester/x")
    with pytest.raises(UserError, match="expected OWNER/NAME"):
        publish_model(ckpt, "no-owner", dry_run=tmp_path / "d", leaderboards=root / "lb")
    with pytest.raises(UserError, match="no leaderboard files"):
        publish_leaderboard("nothing-here", "tester/x", leaderboards=root / "lb")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-home"))
    with pytest.raises(UserError, match="no Hugging Face token"):
        publish_model(ckpt, "tester/x", leaderboards=root / "lb", endpoint="http://127.0.0.1:9")


def test_suite_publish_step_is_off_unless_asked(tmp_path, hub, monkeypatch) -> None:
    import yaml

    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    d = yaml.safe_load(TINY.read_text())
    d["tasks"] = d["tasks"][:1]
    d["seeds"] = [0]
    d["publish"] = {
        "leaderboard": "tester/tiny-board",
        "models": {"bert-tiny-cwt": "tester/tiny-cwt-model"},
    }
    suite = tmp_path / "tiny.yaml"
    suite.write_text(yaml.safe_dump(d))
    s = run_suite(suite, root=tmp_path / "lb", progress=False)
    assert s.published == [] and not hub.state.repos
    s = run_suite(suite, root=tmp_path / "lb", progress=False, publish=True)
    assert s.published == ["tester/tiny-board", "tester/tiny-cwt-model"]
    assert ("dataset", "tester/tiny-board") in hub.state.repos and (
        "model",
        "tester/tiny-cwt-model",
    ) in hub.state.repos
    d["publish"]["models"] = {"nobody": "bad-repo"}
    suite.write_text(yaml.safe_dump(d))
    from harness.suite import SuiteError, load_suite

    with pytest.raises(SuiteError) as err:
        load_suite(suite)
    assert any("publish.models.nobody: not a model label" in p for p in err.value.problems)
    assert any("publish.models.nobody: expected OWNER/NAME" in p for p in err.value.problems)
