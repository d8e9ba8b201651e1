"""Trackers mirror metrics.jsonl: TensorBoard event files read back with tensorboard's own
reader, and a W&B run in offline mode; an unknown tracker is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zoo.errors import UserError
from zoo.train.config import PretrainConfig, load_config
from zoo.train.pretrain import pretrain

RUN = dict(
    preset="bert-tiny",
    objective="ce",
    corpus=["synthetic:200"],
    vocab_size=400,
    steps=3,
    batch_size=4,
    seq_len=32,
    progress=False,
    log_every=1,
)


def test_tensorboard_holds_what_metrics_jsonl_holds(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    pretrain(PretrainConfig(output_dir=str(tmp_path), report_to=["tensorboard"], **RUN))
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    losses = [(x["step"], x["loss"]) for x in lines if "loss" in x]
    got = [(e.step, e.value) for e in events.Scalars("train/loss")]
    assert [s for s, _ in got] == [s for s, _ in losses]
    assert [v for _, v in got] == pytest.approx([v for _, v in losses], rel=1e-6)
    assert "val/val_loss" in events.Tags()["scalars"]


def test_tensorboard_hparams_carry_every_config_field(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    run = {**RUN, "objective": "cwt", "loss": {"temperature": 0.5}}
    cfg = PretrainConfig(output_dir=str(tmp_path), report_to=["tensorboard"], **run)
    pretrain(cfg)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    content = events.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    start = HParamsPluginData.FromString(content).session_start_info.hparams
    assert start["loss.temperature"].number_value == 0.5
    assert start["objective"].string_value == "cwt"
    assert {k.split(".")[0] for k in start} == set(PretrainConfig.model_fields)


def test_wandb_offline_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    pretrain(PretrainConfig(output_dir=str(tmp_path), report_to=["wandb"], **RUN))
    runs = list((tmp_path / "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and list(runs[0].glob("*.wandb"))


def test_an_unknown_tracker_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(
        UserError, match="report_to: unknown tracker 'tensorbord'; did you mean 'tensorboard'"
    ):
        load_config(
            None, {"preset": "bert-tiny", "output_dir": str(tmp_path), "report_to": ["tensorbord"]}
        )


def test_wandb_without_a_login_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("WANDB_MODE", "WANDB_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc, no wandb settings
    monkeypatch.setenv("WANDB_SILENT", "true")
    import wandb

    wandb.teardown()  # a run before this one in the process set W&B up offline
    with pytest.raises(UserError, match=r"--report-to wandb: .*WANDB_MODE=offline"):
        pretrain(PretrainConfig(output_dir=str(tmp_path / "r"), report_to=["wandb"], **RUN))
