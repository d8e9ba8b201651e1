"""Fine-tuning an encoder checkpoint on a classification, regression or multiple-choice task.

By default the head sits on the first token ([CLS]) through the model's own AutoModelFor...
class, loaded from the plain checkpoint, and optimisation follows the paper's Appendix E:
AdamW, a constant schedule after a linear warm-up over `warmup_ratio` of the steps,
evaluation after every epoch. `pooling` (`cls` without the pooler, `mean`) and `schedule`
(`linear` decay) give a recipe that shows a small pretrained encoder better.
The loss is plain or *balanced* cross-entropy (Appendix E.1): per-class summed losses divided by
the class frequency in the batch.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import Tensor
from transformers import (
    AutoModel,
    AutoModelForMultipleChoice,
    AutoModelForSequenceClassification,
)

from harness.downstream.data import Example, Kind, TaskData
from harness.logs import cell_bar
from harness.results.metrics import METRICS
from zoo.tokenizers import load_tokenizer
from zoo.train.checkpoint import load_under_new_head

log = logging.getLogger(__name__)


def balanced_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """Balanced CE of Appendix E.1: sum over classes c present in the batch of L_c / w_c, where
    L_c is the summed cross-entropy of the batch's examples of class c and w_c = n_c / N.

    logits (Tensor): [N, C]; labels (Tensor): [N] class ids. Equals N x sum_c mean_{i in c} CE_i;
    AdamW is invariant to that constant scale (up to eps).
    """
    ce = F.cross_entropy(logits.float(), labels, reduction="none")  # (N,)
    n, c = labels.numel(), logits.shape[-1]
    counts = torch.bincount(labels, minlength=c).to(ce.dtype)  # (C,)
    per_class = torch.zeros(c, dtype=ce.dtype, device=ce.device).index_add(
        0, labels, ce
    )  # (C,) L_c
    present = counts > 0
    return (per_class[present] / (counts[present] / n)).sum()


@dataclass(frozen=True)
class FinetuneConfig:
    epochs: int = 10
    batch_size: int = 32
    lr: float = 1e-5
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1
    loss: Literal["balanced", "ce"] = "balanced"
    max_length: int = 128
    eval_batch_size: int = 64
    seed: int = 0
    device: str = "cpu"  # "cpu" or "cuda", as `zoo.train.distributed.resolve_device` gives it
    pooling: Literal["cls-pooler", "cls", "mean"] = "cls-pooler"
    schedule: Literal["constant", "linear"] = "constant"


class PooledHead(torch.nn.Module):
    """A linear head on the body's [CLS] state (no pooler) or its mean token state, for the
    `pooling` options the Auto classes do not build; returns `.logits` as they do."""

    def __init__(self, body: Any, num_labels: int, pooling: str) -> None:
        super().__init__()
        hidden = int(body.config.hidden_size)
        self.body, self.pooling = body, pooling
        self.dropout = torch.nn.Dropout(0.1)  # as the Auto classes' heads on BERT
        self.out = torch.nn.Linear(hidden, num_labels)

    def forward(self, attention_mask: Tensor, **inputs: Tensor) -> Any:
        h = self.body(attention_mask=attention_mask, **inputs).last_hidden_state  # (B, T, D)
        if self.pooling == "cls":
            pooled = h[:, 0]  # (B, D)
        else:
            mask = attention_mask.unsqueeze(-1).to(h.dtype)  # (B, T, 1)
            pooled = (h * mask).sum(1) / mask.sum(1).clamp(min=1)  # (B, D)
        return SimpleNamespace(logits=self.out(self.dropout(pooled)))  # (B, labels)


def load_head(checkpoint: str | Path, task: TaskData, cfg: FinetuneConfig) -> torch.nn.Module:
    """The checkpoint under the task's head: the Auto class's (its pooler on [CLS]) for
    `cls-pooler` and multiple choice, else a `PooledHead` on the pretrained body."""
    head = HEADS[task.kind]
    if cfg.pooling == "cls-pooler" or head.choices:
        return head.load(checkpoint, task)
    body = load_under_new_head(AutoModel, str(checkpoint))
    return PooledHead(body, task.num_labels, cfg.pooling)


def rate_factor(step: int, warmup: int, total: int, schedule: str) -> float:
    """The learning rate's factor at optimizer step `step` (0-based): a linear warm-up over
    `warmup` steps, then constant or decaying linearly to 0 at `total`."""
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    return max(0.0, (total - step) / max(1, total - warmup))


def _encode(tokenizer: Any, examples: list[Example], max_length: int) -> list[dict[str, list[int]]]:
    out = []
    for ex in examples:
        if ex.choices:
            enc = tokenizer(
                [ex.text_a] * len(ex.choices),
                list(ex.choices),
                truncation=True,
                max_length=max_length,
            )
        elif ex.text_b is None:
            enc = tokenizer(ex.text_a, truncation=True, max_length=max_length)
        else:
            enc = tokenizer(ex.text_a, ex.text_b, truncation=True, max_length=max_length)
        out.append(dict(enc))
    return out


def _collate(
    tokenizer: Any, items: list[dict[str, Any]], multiple_choice: bool, device: str = "cpu"
) -> dict[str, Tensor]:
    if not multiple_choice:
        return {k: v.to(device) for k, v in tokenizer.pad(items, return_tensors="pt").items()}
    n_choices = len(items[0]["input_ids"])
    flat = [{k: v[j] for k, v in it.items()} for it in items for j in range(n_choices)]
    batch = tokenizer.pad(flat, return_tensors="pt")
    # (B, choices, T)
    return {k: v.view(len(items), n_choices, -1).to(device) for k, v in batch.items()}


def _targets(labels: list[float], device: str) -> Tensor:
    return torch.tensor([int(y) for y in labels], device=device)  # (B,) class ids


def _class_loss(logits: Tensor, labels: list[float], cfg: FinetuneConfig) -> Tensor:
    target = _targets(labels, cfg.device)
    if cfg.loss == "balanced":
        return balanced_cross_entropy(logits, target)
    return F.cross_entropy(logits.float(), target)


def _regression_loss(logits: Tensor, labels: list[float], cfg: FinetuneConfig) -> Tensor:
    target = torch.tensor(labels, dtype=torch.float32)  # (B,)
    return F.mse_loss(logits.squeeze(-1).float(), target.to(cfg.device))


def _classes(logits: Tensor) -> list[float]:
    return logits.argmax(-1).tolist()


def _scores(logits: Tensor) -> list[float]:
    return logits.squeeze(-1).tolist()


@dataclass(frozen=True)
class Head:
    """How a kind of task is fine-tuned and read out (its labels: `data.KIND_LABELS`).

    ``load``: the checkpoint with its head; ``choices``: an example holds one encoding per
    choice, batched as (B, choices, T); ``loss``: logits and the batch's labels to the loss;
    ``predict``: logits to the predictions the metrics score.
    """

    load: Callable[[str | Path, TaskData], torch.nn.Module]
    loss: Callable[[Tensor, list[float], FinetuneConfig], Tensor]
    predict: Callable[[Tensor], list[float]]
    choices: bool = False


HEADS: dict[Kind, Head] = {
    "classification": Head(
        lambda ckpt, task: load_under_new_head(
            AutoModelForSequenceClassification, str(ckpt), num_labels=task.num_labels
        ),
        _class_loss,
        _classes,
    ),
    "regression": Head(
        lambda ckpt, task: load_under_new_head(
            AutoModelForSequenceClassification,
            str(ckpt),
            num_labels=task.num_labels,
            problem_type="regression",
        ),
        _regression_loss,
        _scores,
    ),
    "multiple_choice": Head(
        lambda ckpt, task: load_under_new_head(AutoModelForMultipleChoice, str(ckpt)),
        _class_loss,
        _classes,
        choices=True,
    ),
}


@torch.no_grad()
def predict(
    model: torch.nn.Module,
    tokenizer: Any,
    task: TaskData,
    encoded: list[dict[str, Any]],
    batch_size: int,
) -> list[float]:
    model.eval()
    device = str(next(model.parameters()).device)
    head = HEADS[task.kind]
    preds: list[float] = []
    for i in range(0, len(encoded), batch_size):
        items = encoded[i : i + batch_size]
        preds += head.predict(model(**_collate(tokenizer, items, head.choices, device)).logits)
    model.train()
    return preds


def score(task: TaskData, preds: list[float], gold: list[float]) -> dict[str, float]:
    return {m: METRICS.get(m).score(preds, gold) for m in task.scored}


def finetune(
    checkpoint: str | Path,
    task: TaskData,
    train: list[Example],
    evals: dict[str, list[Example]],
    cfg: FinetuneConfig,
) -> list[dict[str, dict[str, float]]]:
    """Train, evaluating every epoch; returns [epoch] -> {eval set -> {metric -> value}}."""
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    tokenizer = load_tokenizer(str(checkpoint))
    head = HEADS[task.kind]
    model = load_head(checkpoint, task, cfg).to(cfg.device)
    enc_train = _encode(tokenizer, train, cfg.max_length)
    enc_evals = {
        name: (_encode(tokenizer, exs, cfg.max_length), [e.label for e in exs])
        for name, exs in evals.items()
    }
    labels_all = [e.label for e in train]
    steps_per_epoch = math.ceil(len(train) / cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    warmup = max(1, int(cfg.warmup_ratio * total))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: rate_factor(s, warmup, total, cfg.schedule)
    )
    history: list[dict[str, dict[str, float]]] = []
    model.train()
    start = time.perf_counter()
    bar = cell_bar(total, f"{task.benchmark}/{task.name} lr {cfg.lr:g}", "step")
    for epoch in range(cfg.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        for i in range(0, len(order), cfg.batch_size):
            idx = order[i : i + cfg.batch_size]
            items = [enc_train[j] for j in idx]
            batch = _collate(tokenizer, items, head.choices, cfg.device)
            loss = head.loss(model(**batch).logits, [labels_all[j] for j in idx], cfg)
            if not torch.isfinite(loss):
                from zoo.errors import TrainingDiverged

                raise TrainingDiverged(
                    f"{task.benchmark}/{task.name}: fine-tuning loss is {float(loss.detach())}"
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            bar.update()
        bar.set_postfix(epoch=f"{epoch + 1}/{cfg.epochs}", loss=f"{float(loss.detach()):.3f}")
        history.append(
            {
                name: score(task, predict(model, tokenizer, task, enc, cfg.eval_batch_size), gold)
                for name, (enc, gold) in enc_evals.items()
            }
        )
        _log_epoch(task, epoch, cfg, history[-1], time.perf_counter() - start, len(train))
    bar.close()
    return history


def _log_epoch(
    task: TaskData,
    epoch: int,
    cfg: FinetuneConfig,
    scores: dict[str, dict[str, float]],
    seconds: float,
    n_train: int,
) -> None:
    """One line per epoch (a GLUE cell fine-tunes for minutes): the primary metric on each
    evaluation set, and the time so far."""
    read = "; ".join(f"{name} {task.primary} {s[task.primary]:.4g}" for name, s in scores.items())
    log.info(
        "%s/%s: epoch %d/%d on %d examples (lr %g, seed %d): %s; %.0f s so far",
        task.benchmark,
        task.name,
        epoch + 1,
        cfg.epochs,
        n_train,
        cfg.lr,
        cfg.seed,
        read,
        seconds,
    )
