"""`--resume` is honest: settings that define the run are compared with those it started
with and refused when they differ; the ones that may change are applied and recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tiny import TINY_RUN
from zoo.errors import UserError
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain

TINY = dict(save_every=2, **TINY_RUN)


def _started(tmp_path: Path) -> PretrainConfig:
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="cwt",
        output_dir=str(tmp_path / "r"),
        steps=4,
        lr=1e-3,
        **TINY,
    )
    pretrain(cfg)
    return cfg


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"seed": 1}, "seed: 0 -> 1"),
        ({"objective": "ce"}, "objective: 'cwt' -> 'ce'"),
        ({"corpus": ["synthetic:200"]}, "corpus: ['synthetic:300'] -> ['synthetic:200']"),
        ({"seed": 2, "seq_len": 16}, "seq_len: 32 -> 16"),
        ({"bf16": True}, "bf16: False -> True"),
        ({"fast_dropout": False}, "fast_dropout: True -> False"),
    ],
)
def test_changed_defining_settings_are_refused(tmp_path: Path, change: dict, named: str) -> None:
    cfg = _started(tmp_path)
    before = sorted(p.name for p in (tmp_path / "r" / "checkpoints").iterdir())
    with pytest.raises(UserError, match="settings define the run") as info:
        pretrain(cfg.model_copy(update={**change, "steps": 6}), resume=True)
    assert named in str(info.value)
    assert sorted(p.name for p in (tmp_path / "r" / "checkpoints").iterdir()) == before


def test_fewer_steps_than_made_are_refused(tmp_path: Path) -> None:
    cfg = _started(tmp_path)  # checkpoints at step 2 (step 4 is final/)
    with pytest.raises(UserError, match="steps 1 is below the checkpoint's step 2"):
        pretrain(cfg.model_copy(update={"steps": 1}), resume=True)


def test_a_new_learning_rate_and_more_steps_are_applied_and_recorded(tmp_path: Path) -> None:
    cfg = _started(tmp_path)
    final = pretrain(cfg.model_copy(update={"steps": 6, "lr": 5e-4}), resume=True)
    meta = read_metadata(final)
    assert meta.steps == 6
    assert [(r.step, r.changed) for r in meta.resumed] == [
        (2, {"steps": [4, 6], "lr": [0.001, 0.0005]})
    ]
    rows = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    lr = {r["step"]: r["lr"] for r in rows if "lr" in r}
    # pythia-tiny warms up over 20 steps: after step s the rate is peak x (s + 1) / 20
    assert lr[2] == pytest.approx(1e-3 * 3 / 20) and lr[3] == pytest.approx(5e-4 * 4 / 20)


@pytest.mark.parametrize(
    ("scheduler", "named"),
    [
        ({"last_epoch": "x"}, "scheduler.lr_lambdas: Field required"),
        ("keep-but-epoch-text", "scheduler.last_epoch"),
        ("keep-but-negative-rate", "scheduler.base_lrs"),
        ("twice-the-groups", "parameter groups"),
    ],
)
def test_a_garbled_scheduler_state_is_bad_input(tmp_path: Path, scheduler, named: str) -> None:
    """A checkpoint's scheduler state someone garbled is named, never torch's KeyError."""
    from zoo.train.atomic import write_commit

    cfg = _started(tmp_path)
    (Path(cfg.output_dir) / "final").rename(tmp_path / "final-aside")  # resume from step 2
    step = Path(cfg.output_dir) / "checkpoints" / "step-0000002"
    state = json.loads((step / "training_state.json").read_text())
    sched = state["scheduler"]
    if scheduler == "keep-but-epoch-text":
        sched["last_epoch"] = "2"
    elif scheduler == "keep-but-negative-rate":
        sched["base_lrs"] = [-1.0] * len(sched["base_lrs"])
    elif scheduler == "twice-the-groups":
        for key in ("base_lrs", "_last_lr", "lr_lambdas"):
            sched[key] = sched[key] * 2
    else:
        state["scheduler"] = scheduler
    (step / "training_state.json").write_text(json.dumps(state))
    write_commit(step)
    with pytest.raises(UserError, match=named):
        pretrain(cfg, resume=True)
