"""The training loop reads values back from the device once per log step, not per step or
micro-batch, and a device-side skip leaves the weights and the optimizer's moments alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import zoo.train.guard as guard
import zoo.train.loop as loop
import zoo.train.optim as optim
import zoo.train.update as update
from tests.tiny import TINY_RUN
from zoo.train.config import PretrainConfig
from zoo.train.guard import NonFiniteGuard, skips_on_device
from zoo.train.pretrain import pretrain
from zoo.train.run import Counters

STEP_CODE = {m.__file__ for m in (loop, update, guard, optim)}


def _host_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **run: object) -> int:
    """How many times the loop's own step code brings tensors to the host (`float`, `int`,
    `bool`, `item`, `tolist` called from the loop, the step, the guard or the optimizer
    helpers inside `loop._step`). Evaluation and saves are left out; the model's forward
    too: a pruned last layer needs its row count as a shape."""
    copies = 0
    inside = False
    for name in ("__float__", "__int__", "__bool__", "item", "tolist"):
        original = getattr(torch.Tensor, name)

        def counted(self: torch.Tensor, *a: object, _original: object = original) -> object:
            nonlocal copies
            copies += inside and sys._getframe(1).f_code.co_filename in STEP_CODE
            return _original(self, *a)  # type: ignore[operator]

        monkeypatch.setattr(torch.Tensor, name, counted)
    train_step, evaluate, save = loop.train_step, loop.evaluate, loop.Checkpointer.maybe_save

    def watched(*args: object) -> object:
        nonlocal inside
        inside = True
        return train_step(*args)  # type: ignore[arg-type]

    def outside(real: object) -> object:
        def call(*args: object) -> object:
            nonlocal inside
            inside = False
            return real(*args)  # type: ignore[operator]

        return call

    monkeypatch.setattr(loop, "train_step", watched)
    monkeypatch.setattr(loop, "evaluate", outside(evaluate))
    monkeypatch.setattr(loop.Checkpointer, "maybe_save", outside(save))
    cfg = PretrainConfig(
        preset="bert-tiny", objective="cwt", output_dir=str(tmp_path / "r"), **{**TINY_RUN, **run}
    )
    pretrain(cfg)
    return copies


def test_a_step_reads_back_once_per_log_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six steps logged at steps 1, 3 and 6: three reads, whatever the micro-batches."""
    whole = _host_copies(tmp_path / "a", monkeypatch, steps=6, log_every=3, micro_batch_size=4)
    split = _host_copies(tmp_path / "b", monkeypatch, steps=6, log_every=3, micro_batch_size=1)
    assert whole == split == 3


def _adamw(p: torch.nn.Parameter) -> torch.optim.AdamW:
    return torch.optim.AdamW([p], lr=0.1, fused=True)


def test_a_skip_on_the_device_changes_nothing_and_is_counted_when_read() -> None:
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.randn(4, 3))
    opt = _adamw(p)
    counters = Counters()
    g = NonFiniteGuard(Path("out"), counters, 2, 0.1, 1.0)
    assert skips_on_device(opt)
    p.grad = torch.ones_like(p)
    g.step(1, opt, torch.tensor(1.0), torch.tensor(1.0))  # a good step: moments exist
    weights, moments = p.detach().clone(), opt.state[p]["exp_avg"].clone()
    step_count = opt.state[p]["step"].clone()
    p.grad = torch.full_like(p, float("nan"))
    g.step(2, opt, torch.tensor(1.0), torch.tensor(float("nan")))
    assert torch.equal(p.detach(), weights) and torch.equal(opt.state[p]["exp_avg"], moments)
    assert torch.equal(opt.state[p]["step"], step_count)
    assert counters.skipped_steps == 0 and len(g.pending) == 2  # not read yet
    assert g.settle(torch.tensor([5.0, 6.0])) == [5.0, 6.0]  # read with the flags
    assert counters.skipped_steps == 1 and g.updates == 1 and not g.pending


def test_an_optimizer_that_cannot_skip_on_the_device_is_decided_on_the_host() -> None:
    p = torch.nn.Parameter(torch.zeros(3))
    opt = torch.optim.AdamW([p], lr=0.1, foreach=True)
    counters = Counters()
    g = NonFiniteGuard(Path("out"), counters, 0, 0.1, 1.0)
    assert not skips_on_device(opt)
    p.grad = torch.ones(3)
    g.step(1, opt, torch.tensor(1.0), torch.tensor(1.0))
    assert counters.skipped_steps == 0 and not g.pending and bool((p != 0).all())
    with pytest.raises(guard.TrainingDiverged, match="step 2: loss inf, 1 steps in a row"):
        g.step(2, opt, torch.tensor(float("inf")), torch.tensor(1.0))


def test_a_log_rows_speed_is_the_mean_since_the_row_before(tmp_path: Path) -> None:
    """Rows at steps 1, 3 and 6: each row's step_seconds times the steps since the row before
    adds up to the run's training seconds (the read-back at a log step counted too), and its
    tokens_per_s is its step's tokens over step_seconds."""
    import json

    from zoo.train.metadata import read_metadata

    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir=str(tmp_path / "r"),
        **{**TINY_RUN, "steps": 6, "log_every": 3},
    )
    final = pretrain(cfg)
    lines = [json.loads(x) for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in lines if "step_seconds" in r]
    assert [r["step"] for r in rows] == [1, 3, 6]
    since = [1, 2, 3]
    total = sum(r["step_seconds"] * n for r, n in zip(rows, since, strict=True))
    assert total == pytest.approx(read_metadata(final).wall_seconds, rel=1e-9)
    tokens = cfg.batch_size * cfg.seq_len
    for r in rows:
        assert r["tokens_per_s"] == pytest.approx(tokens / r["step_seconds"])
        assert r["skipped_steps"] == 0


def test_a_run_without_a_bar_prints_progress_lines(tmp_path, monkeypatch, caplog) -> None:
    """Where stderr is no terminal (`hlm pretrain > log`), the loop says step, loss, rate,
    speed, tokens and time left, as HF's Trainer does, and always at the last step."""
    import logging

    import zoo.train.loop as loop
    from tests.tiny import TINY_RUN
    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    monkeypatch.setattr(loop, "SAY_EVERY_S", 0.0)
    cfg = {**TINY_RUN, "progress": True, "log_every": 2}
    with caplog.at_level(logging.INFO, logger="zoo.train.progress"):
        pretrain(PretrainConfig(preset="bert-tiny", output_dir=str(tmp_path), steps=4, **cfg))
    said = [r.getMessage() for r in caplog.records if r.name == "zoo.train.progress"]
    assert [m.split(" (")[0] for m in said] == ["step 1/4", "step 2/4", "step 4/4"]
    assert all("loss " in m and "tokens/s" in m and "ETA " in m for m in said)
    # a token budget that stops the run first is what the lines count to (and the ETA)
    caplog.clear()
    tokens = 3 * TINY_RUN["batch_size"] * TINY_RUN["seq_len"]
    with caplog.at_level(logging.INFO, logger="zoo.train.progress"):
        pretrain(PretrainConfig(preset="bert-tiny", output_dir=str(tmp_path / "b"), steps=40,
                                max_tokens=tokens, **cfg))  # fmt: skip
    said = [r.getMessage() for r in caplog.records if r.name == "zoo.train.progress"]
    assert [m.split(" (")[0] for m in said] == ["step 1/3", "step 2/3", "step 3/3"]
    assert said[-1].endswith("ETA 0h00m")
