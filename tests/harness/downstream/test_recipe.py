"""The fine-tuning recipe's options: the head's pooling, a decaying rate, and a learning
rate chosen per model on a slice held out of the training set, never on what is scored."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.downstream.benchmarks import GLUE
from harness.downstream.classifier import (
    FinetuneConfig,
    PooledHead,
    finetune,
    load_head,
    rate_factor,
)
from harness.downstream.data import Example
from harness.tasks import encoder_benchmarks
from harness.tasks.finetune_params import FinetuneParams


def test_the_rate_is_constant_or_decays_after_warm_up() -> None:
    assert [rate_factor(s, 2, 10, "constant") for s in (0, 1, 2, 9)] == [0.5, 1.0, 1.0, 1.0]
    linear = [rate_factor(s, 2, 10, "linear") for s in (0, 1, 2, 6, 10)]
    assert linear == [0.5, 1.0, 1.0, 0.5, 0.0]


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_a_pooled_head_reads_the_pretrained_body(tiny_encoder: Path, pooling: str) -> None:
    cfg = FinetuneConfig(pooling=pooling)
    model = load_head(tiny_encoder, GLUE["sst2"], cfg)
    assert isinstance(model, PooledHead)
    ids = torch.tensor([[2, 5, 6, 3, 0], [2, 7, 3, 0, 0]])  # (B, T)
    mask = (ids > 0).long()
    logits = model(input_ids=ids, attention_mask=mask).logits
    assert logits.shape == (2, 2)
    # the padding is not read: the first sentence's mean ignores position 4 whatever it holds
    model.eval()
    other = ids.clone()
    other[0, 4] = 9
    torch.testing.assert_close(
        model(input_ids=ids, attention_mask=mask).logits[0],
        model(input_ids=other, attention_mask=mask).logits[0],
    )
    default = load_head(tiny_encoder, GLUE["sst2"], FinetuneConfig())
    assert not isinstance(default, PooledHead)  # the paper's: AutoModelForSequenceClassification


def test_mean_pooling_and_a_decaying_rate_fine_tune(tiny_encoder: Path) -> None:
    train = [Example(f"good {i}" if i % 2 else f"bad {i}", None, float(i % 2)) for i in range(40)]
    cfg = FinetuneConfig(epochs=2, batch_size=8, lr=1e-3, pooling="mean", schedule="linear")
    history = finetune(tiny_encoder, GLUE["sst2"], train, {"dev": train[:10]}, cfg)
    assert len(history) == 2 and 0.0 <= history[-1]["dev"]["accuracy"] <= 1.0


def test_the_rate_is_chosen_on_held_out_train_never_on_the_scored_set(monkeypatch) -> None:
    train = [Example(f"t{i}", None, float(i % 2)) for i in range(50)]
    seen: list[tuple[float, list[str], list[str]]] = []

    def fake(ckpt, task, fit, evals, cfg):  # the rate 1e-4 scores best on the held-out slice
        seen.append((cfg.lr, [e.text_a for e in fit], [e.text_a for e in evals["held"]]))
        return [{"held": {"accuracy": 1.0 if cfg.lr == 1e-4 else 0.5}}]

    monkeypatch.setattr("harness.downstream.classifier.finetune", fake)
    p = FinetuneParams(lr_grid=[1e-5, 1e-4, 1e-3])
    cfg = FinetuneConfig(seed=7)
    assert encoder_benchmarks.chosen_rate(Path("x"), GLUE["sst2"], train, p, cfg) == 1e-4
    assert [lr for lr, _, _ in seen] == [1e-5, 1e-4, 1e-3]
    for _, fit, held in seen:
        assert len(held) == 5 and not set(fit) & set(held)
        assert set(fit) | set(held) == {e.text_a for e in train}
