"""Poisoned state is never written: non-finite gradients skip the update, too many in a row
stop the run with a true message, and no checkpoint or result holds a non-finite value."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from zoo.errors import TrainingDiverged
from zoo.registry import load_plugin
from zoo.train.config import PretrainConfig
from zoo.train.layout import list_checkpoints
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain

TINY = dict(
    steps=10, batch_size=4, seq_len=32, vocab_size=400, corpus=["synthetic:300"], progress=False
)

PLUGIN = """
import torch
from zoo.objectives import OBJECTIVES, ContrastiveOptions, Objective, contrastive_flops
from zoo.objectives.builtin import cwt_objective

def loss(batch, options):
    out = cwt_objective(batch, options)
    if torch.is_grad_enabled():
        loss.calls += 1
        if loss.calls in BAD:
            # sqrt at 0: a finite (zero) loss term whose gradient is not finite
            d = batch.hidden - batch.hidden.detach()
            out["loss"] = out["loss"] + 0.0 * torch.sqrt((d * d).sum())
    return out

loss.calls = 0
BAD = {BAD}
OBJECTIVES.add("{NAME}", Objective("{NAME}", loss, needs_head=False, flops=contrastive_flops,
                                   options=ContrastiveOptions))
"""


def _plugin(tmp_path: Path, name: str, bad: set[int]) -> str:
    f = tmp_path / f"{name}.py"
    f.write_text(PLUGIN.replace("{BAD}", repr(bad)).replace("{NAME}", name))
    load_plugin(f, trusted=True)  # as the user's --plugins: a config names code it imported
    return str(f)


def _finite(folder: Path) -> bool:
    return all(
        bool(torch.isfinite(t).all()) for t in load_file(str(folder / "model.safetensors")).values()
    )


def test_a_transient_non_finite_gradient_skips_one_update(tmp_path: Path) -> None:
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="nan-grad-once",
        output_dir=str(tmp_path / "r"),
        plugins=[_plugin(tmp_path, "nan-grad-once", {3})],
        **TINY,
    )
    final = pretrain(cfg)
    meta = read_metadata(final)
    assert meta.skipped_steps == 1 and meta.steps == 10 and _finite(final)
    assert all(math.isfinite(v) for v in meta.validation.values())


def _logged_lrs(out: Path) -> list[tuple[int, float]]:
    lines = (json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines())
    return [(row["step"], row["lr"]) for row in lines if "lr" in row]


def test_a_skipped_first_step_still_advances_the_schedule_quietly(tmp_path: Path) -> None:
    """The learning rate is a function of the step counter, skipped steps included, and the
    first step being skipped raises no torch warning about the schedule's order."""
    runs = {}
    for name, bad in (("nan-grad-first", {1}), ("nan-grad-never", set())):
        cfg = PretrainConfig(
            preset="pythia-tiny",
            objective=name,
            output_dir=str(tmp_path / name),
            plugins=[_plugin(tmp_path, name, bad)],
            **{**TINY, "steps": 4, "log_every": 1},
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            final = pretrain(cfg)
        assert not [w for w in caught if "lr_scheduler.step()" in str(w.message)]
        assert read_metadata(final).skipped_steps == len(bad)
        runs[name] = _logged_lrs(tmp_path / name)
    assert [s for s, _ in runs["nan-grad-first"]] == [1, 2, 3, 4]
    assert runs["nan-grad-first"] == runs["nan-grad-never"]


def test_too_many_in_a_row_stop_with_a_true_message(tmp_path: Path) -> None:
    out = tmp_path / "r"
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="nan-grad-from-4",
        output_dir=str(out),
        save_every=2,
        plugins=[_plugin(tmp_path, "nan-grad-from-4", set(range(4, 100)))],
        **TINY,
    )
    with pytest.raises(TrainingDiverged) as info:
        pretrain(cfg)
    msg = str(info.value)
    saved = list_checkpoints(out)
    # steps 4-6 skipped, step 7 is the fourth in a row (max_nonfinite_skips 3)
    assert msg.startswith("step 7: non-finite gradients, 4 steps in a row")
    assert f"the last good checkpoint is {saved[-1]}" in msg  # the folder that holds it
    assert "gradient clipping is already on at 1" in msg  # advice that fits the run
    assert [p.name for p in saved] == ["step-0000002", "step-0000004", "step-0000006"]
    assert all(_finite(p) for p in saved) and not (out / "final").exists()


def test_a_run_whose_every_step_was_skipped_is_an_error(tmp_path: Path) -> None:
    """Three steps, all skipped, fewer than max_nonfinite_skips in a row: once exit 0 and a
    `final/` of untrained weights; now an error, and no `final/`."""
    out = tmp_path / "r"
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="nan-grad-always",
        output_dir=str(out),
        plugins=[_plugin(tmp_path, "nan-grad-always", set(range(1, 100)))],
        **{**TINY, "steps": 3},
    )
    with pytest.raises(TrainingDiverged, match="every one of the 3 steps of this run was skipped"):
        pretrain(cfg)
    assert not (out / "final").exists()
