"""Publishing against a loopback Hub (tests/harness/hubserver.py): upload, download back with
plain transformers / datasets, no new commit when unchanged, the token nowhere."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.cli import main as hlm
from harness.publish.hub import publish_leaderboard, publish_model
from harness.results.leaderboard import read_leaderboard
from harness.run.runner import run_suite
from tests.harness.conftest import TINY
from tests.harness.hubserver import TOKEN, HubServer
from zoo.errors import UserError


@pytest.fixture(scope="module")
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


def _online(monkeypatch) -> None:
    """The tests run offline (conftest); the client reads HF_HUB_OFFLINE at import, so talking
    to the loopback Hub means lifting its offline flag for this test."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)


@pytest.fixture
def hub(monkeypatch):
    _online(monkeypatch)
    with HubServer() as server:
        yield server


def tree_digest(path: Path) -> dict[str, str]:
    return {
        str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(path.rglob("*"))
        if f.is_file()
    }


DOWNLOAD = """
import json, sys, torch
from transformers import AutoModelForMaskedLM, AutoTokenizer
from datasets import load_dataset
model = AutoModelForMaskedLM.from_pretrained(sys.argv[1])
tok = AutoTokenizer.from_pretrained(sys.argv[1])
ds = load_dataset(sys.argv[2], split="train")
sd = {k: float(v.double().sum()) for k, v in model.state_dict().items()}
print(json.dumps({"sums": sd, "vocab": len(tok), "rows": ds.num_rows, "values": sorted(ds["value"]), "cols": ds.column_names}))
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
    assert 'AutoModelForMaskedLM.from_pretrained("tester/tiny-cwt")' in card
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
    assert "configs:" in dcard and "data/*.parquet" in dcard and "| `metric` |" in dcard

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
    from transformers import AutoModelForMaskedLM

    local = AutoModelForMaskedLM.from_pretrained(ckpt).state_dict()
    assert got["sums"] == pytest.approx({k: float(v.double().sum()) for k, v in local.items()})
    lb = read_leaderboard(root / "lb" / "tiny")
    assert got["rows"] == len(lb) and got["values"] == pytest.approx(sorted(lb["value"]))
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
                "--write-to",
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
    _online(monkeypatch)
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


def test_a_finetuned_card_names_the_pretraining_objective(tmp_path) -> None:
    from harness.publish.cards import CardOptions, model_card
    from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    tiny = dict(
        corpus=["synthetic:300"], vocab_size=600, steps=3, batch_size=4, seq_len=32, progress=False
    )
    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "p"), **tiny
        )
    )
    ft = finetune_causal(
        str(final),
        str(tmp_path / "ft"),
        CausalFinetuneConfig(steps=2, warmup_steps=1, progress=False),
    )
    import pandas as pd

    card = model_card(ft, "me/x", pd.DataFrame(), CardOptions())
    assert "pretrained with the `cwt` objective" in card and "objective-cwt" in card  # was `ce`
    assert "| causal fine-tuning | yes: 2 steps" in card


def test_cards_read_back_with_huggingface_hubs_parsers(trained, hub, capsys) -> None:
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard import metadata_load

    root, ckpt = trained
    assert (
        hlm(
            [
                "publish",
                "model",
                str(ckpt),
                "--repo",
                "tester/cards",
                "--endpoint",
                hub.url,
                "--leaderboards",
                str(root / "lb"),
            ]
        )
        == 0
    )
    assert f"{hub.url}/tester/cards" in capsys.readouterr().out  # the Hub URL is printed
    text = hub.state.repos[("model", "tester/cards")].branches["main"]["README.md"].decode()
    readme = root / "README.md"
    readme.write_text(text)
    card = ModelCard.load(readme)  # what the Hub served, read as the Hub's client reads it
    meta = card.data.to_dict()
    assert meta["library_name"] == "transformers"
    assert meta["pipeline_tag"] == "feature-extraction"  # a headless encoder: no fill-mask widget
    assert "language" not in meta  # trained on the synthetic corpus only
    # validation loss on a local corpus and throughput are no Hub evaluations: the table only
    assert "model-index" not in meta and "val_loss" in text.split("## Results")[1]
    assert "never trained" in text and "@inproceedings{godey2024headless" in text
    assert "nan" not in text.split("## Results")[1].split("## Citation")[0]
    assert metadata_load(readme)["pipeline_tag"] == "feature-extraction"

    assert (
        hlm(
            [
                "publish",
                "leaderboard",
                "tiny",
                "--repo",
                "tester/cards-lb",
                "--endpoint",
                hub.url,
                "--leaderboards",
                str(root / "lb"),
            ]
        )
        == 0
    )
    assert f"{hub.url}/datasets/tester/cards-lb" in capsys.readouterr().out
    dcard = hub.state.repos[("dataset", "tester/cards-lb")].branches["main"]["README.md"].decode()
    assert "- **models** (2)" in dcard and "- **seeds**: 0, 1" in dcard
    assert "```yaml" not in dcard and "null" not in dcard.split("## Schema")[0]


def test_a_finetuned_card_names_its_base_and_serves_generation(tmp_path) -> None:
    import pandas as pd
    from huggingface_hub import ModelCard

    from harness.publish.cards import CardOptions, model_card
    from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    tiny = dict(
        corpus=["synthetic:300"], vocab_size=600, steps=2, batch_size=4, seq_len=32, progress=False
    )
    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "p"), **tiny
        )
    )
    headless = ModelCard(model_card(final, "me/h", pd.DataFrame(), CardOptions())).data
    assert headless.pipeline_tag == "feature-extraction"
    ft = finetune_causal(
        str(final),
        str(tmp_path / "ft"),
        CausalFinetuneConfig(steps=2, warmup_steps=1, progress=False),
    )
    card = ModelCard(model_card(ft, "me/x", pd.DataFrame(), CardOptions(base_model="me/h")))
    assert card.data.base_model == "me/h" and card.data.pipeline_tag == "text-generation"


def test_the_model_index_holds_only_the_models_own_scores_on_hub_datasets(tmp_path) -> None:
    """A fine-tuned benchmark's last-epoch metrics, under the benchmark's Hub dataset id and
    config; no trivial baseline (majority), no best-epoch pick (@best), no average, no local
    validation loss. The model-index reads back with huggingface_hub's parser."""
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import model_index_to_eval_results

    from harness.publish.cards import CardOptions, _card_data
    from tests.harness.results.test_leaderboard import row
    from zoo.train.metadata import CheckpointMetadata

    glue = json.dumps({"task": {"type": "glue", "params": {}}})
    lm = json.dumps({"task": {"type": "lm_eval", "params": {}}})
    val = json.dumps({"task": {"type": "validation", "params": {}}})
    rows = pd.DataFrame(
        [
            {**row("m", metric, value, seed=seed, task=task), "config": config}
            for seed in (0, 1)
            for task, metric, value, config in (
                ("glue/sst2", "accuracy", 0.8 + seed / 100, glue),
                ("glue/sst2", "accuracy@best", 0.9, glue),
                ("glue/sst2", "majority", 0.5, glue),
                ("glue/average", "average", 0.6, glue),
                ("validation", "val_loss", 3.0, val),
                ("lm_eval/hlm_lambada", "acc", 0.1, lm),
            )
        ]
    )
    meta = CheckpointMetadata.model_construct(
        kind="encoder", family="bert", objective="ce", headless=False, corpus=["corpus"],
        causal_finetune=None,
    )  # fmt: skip
    data = _card_data(meta, "me/m", rows, CardOptions())
    card = ModelCard.from_template(data)
    meta_dict = card.data.to_dict()
    assert meta_dict["pipeline_tag"] == "fill-mask"  # a vanilla encoder keeps its MLM head
    _, results = model_index_to_eval_results(meta_dict["model-index"])
    assert [(r.task_type, r.dataset_type, r.dataset_config, r.metric_type) for r in results] == [
        ("text-classification", "nyu-mll/glue", "sst2", "accuracy")
    ]
    assert results[0].metric_value == pytest.approx(0.805)
