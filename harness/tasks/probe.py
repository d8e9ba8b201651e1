"""`probe` task: what a checkpoint's frozen features carry (SentEval / MTEB style), and how
collapsed its token states are. No fine-tuning, so no fine-tuning noise: seconds a checkpoint.

For each sub-task, sentences are encoded apart, each into
- `mean`: the last layer's token states, mean-pooled over the sentence's tokens;
- `static`: the mean of its tokens' input embeddings (no context at all);
- `last` (decoders): the last token's state, what a causal model has read the sentence by.

Then, on GLUE's local files (train to fit, dev to score):
- `sst2`: logistic regression on the sentence's features, accuracy;
- `mrpc`: logistic regression on [u, v, |u-v|, u*v], F1 of "paraphrase" and accuracy;
- `stsb`: zero-shot cosine(u, v) and ridge on [u*v, |u-v|], Pearson r.
Each probe's regularisation is chosen on a slice held out of the training set, never on dev.
`heldout` keeps SST-2 training phrases out of the fit and scores them too
(`probe/sst2-heldout/<feature>`): dev's 872 sentences put about 1.6 points of noise on
one model's accuracy, as much as the gaps the probe is asked about.

Beside every model's rows stand the trivial baselines (`majority`: the most frequent training
class; `jaccard`: the same probe on token overlap alone), and an untrained twin in the suite
(`steps: 0`) is probed as any model is. `diagnostics`: the mean cosine between the last
layer's token states and their effective rank, on the STS-B dev sentences: along pretraining,
a run's leaving the early collapse shows as the cosine falling and the rank rising.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
from pydantic import Field, field_validator

from harness.downstream.benchmarks import GLUE
from harness.downstream.data import Example, load_examples, local_names, local_path
from harness.downstream.probes import (
    classify,
    cosines,
    effective_rank,
    jaccard,
    pair_features,
    pearson,
    regress,
    similarity_features,
    token_cosine,
)
from harness.results.gates import Gate
from harness.results.metrics import answer_share
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from harness.tasks.finetune_params import MAX_EXAMPLES, distinct
from zoo.checksums import short_digests
from zoo.data.corpus import data_root
from zoo.errors import UserError
from zoo.settings import Settings

if TYPE_CHECKING:
    import torch

Probe = Literal["sst2", "mrpc", "stsb"]
Feature = Literal["mean", "static", "last"]
DEFAULT_FEATURES: tuple[Feature, ...] = ("mean", "static")
DIAGNOSTIC_TOKENS = 4096  # token states the diagnostics read (STS-B dev's first sentences)
HELDOUT_DRAW = 0  # the seed that draws the held-out SST-2 phrases, for every model and seed


class ProbeParams(Settings):
    tasks: list[Probe] = Field(default_factory=lambda: list(get_args(Probe)), min_length=1)
    features: list[Feature] = Field(default_factory=lambda: [*DEFAULT_FEATURES], min_length=1)
    max_examples: int | None = Field(
        None,
        gt=0,
        le=MAX_EXAMPLES,
        description="training examples per probe at most (unset: the full set)",
    )
    max_length: int = Field(128, gt=1, le=4096, description="tokens per sentence at most")
    batch_size: int = Field(64, gt=0, le=4096)
    heldout: int = Field(
        0,
        ge=0,
        le=MAX_EXAMPLES,
        description="SST-2 training phrases kept out of the probe's fit and scored as a second "
        "test set (`probe/sst2-heldout/<feature>`), the same phrases for every model and seed: "
        "8,000 of them waver about 3x less than dev's 872 sentences; the dev rows then "
        "come from a fit without them (0: none)",
    )

    @field_validator("tasks", "features")
    @classmethod
    def _each_once(cls, values: list[str]) -> list[str]:
        """A probe or a feature twice would write one measurement twice."""
        return distinct(values) or values


def _encoder(ctx: TaskContext) -> tuple[Any, Any]:
    from zoo.tokenizers import load_tokenizer
    from zoo.train.checkpoint import load_model

    if ctx.checkpoint is None:
        raise UserError("probe needs a checkpoint")
    model = load_model(str(ctx.checkpoint)).eval()
    return model, load_tokenizer(str(ctx.checkpoint))


def encode(
    model: Any, tokenizer: Any, texts: list[str], p: ProbeParams, states: list[np.ndarray]
) -> dict[str, np.ndarray]:
    """Each feature of `p.features` for every text -> {feature: [N, D]}; the token states
    met are appended to `states` (each [T, D]) until `DIAGNOSTIC_TOKENS`."""
    import torch

    out: dict[str, list[np.ndarray]] = {f: [] for f in p.features}
    emb = model.get_input_embeddings()
    for i in range(0, len(texts), p.batch_size):
        enc = tokenizer(
            texts[i : i + p.batch_size],
            truncation=True,
            max_length=p.max_length,
            padding=True,
            return_tensors="pt",
        )
        mask = enc["attention_mask"].unsqueeze(-1).float()  # (B, T, 1)
        with torch.no_grad():
            # the body alone: the same states as the whole model's, without its vocabulary head
            body = model.base_model(**enc, output_hidden_states=True)
            hidden = body.hidden_states[-1]  # (B, T, D)
            pooled = _pool(hidden, emb(enc["input_ids"]), mask)
        for f in p.features:
            out[f].append(pooled[f].numpy())
        if sum(len(s) for s in states) < DIAGNOSTIC_TOKENS:
            states += [h[m.squeeze(-1) > 0].numpy() for h, m in zip(hidden, mask, strict=True)]
    return {f: np.concatenate(parts) for f, parts in out.items()}


def _pool(hidden: torch.Tensor, static: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
    """hidden, static: (B, T, D); mask: (B, T, 1) -> each feature (B, D)."""
    count = mask.sum(1).clamp(min=1)  # (B, 1)
    last = mask.squeeze(-1).sum(1).long() - 1  # (B,) the last real token (right padding)
    return {
        "mean": (hidden * mask).sum(1) / count,
        "static": (static * mask).sum(1) / count,
        "last": hidden[range(len(hidden)), last],
    }


def _examples(name: str, split: str, p: ProbeParams, seed: int) -> list[Example]:
    examples = load_examples(GLUE[name], split, "local", data_root())
    return _at_most(examples, p.max_examples, seed) if split == "train" else examples


def _at_most(examples: list[Example], n: int | None, seed: int) -> list[Example]:
    """At most `n` of `examples`, drawn under `seed`, in their order."""
    if n is None or len(examples) <= n:
        return examples
    order = np.random.default_rng(seed).permutation(len(examples))[:n]
    return [examples[i] for i in sorted(order)]


def _sst2_splits(p: ProbeParams, seed: int) -> tuple[list[Example], list[Example]]:
    """SST-2's training phrases to fit on (at most `max_examples`, drawn under `seed`) and
    the `heldout` ones kept out of the fit: drawn once under `HELDOUT_DRAW`, so every model
    and seed is scored on the same phrases."""
    train = load_examples(GLUE["sst2"], "train", "local", data_root())
    if p.heldout >= len(train):
        raise UserError(f"probe: heldout: {p.heldout}, but SST-2 has {len(train)} training phrases")
    kept = set(np.random.default_rng(HELDOUT_DRAW).permutation(len(train))[: p.heldout].tolist())
    fit = [e for i, e in enumerate(train) if i not in kept]
    return _at_most(fit, p.max_examples, seed), [train[i] for i in sorted(kept)]


def _labels(examples: list[Example]) -> np.ndarray:
    return np.asarray([ex.label for ex in examples])


def _f1(pred: np.ndarray, gold: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(gold, pred))


def _sst2(enc: Any, p: ProbeParams, seed: int) -> list[Result]:
    (train, held), dev = _sst2_splits(p, seed), _examples("sst2", "eval", p, seed)
    tests = {"sst2": dev, "sst2-heldout": held} if held else {"sst2": dev}
    x_fit, y = enc([e.text_a for e in train]), _labels(train)
    # each test set encoded apart: dev's batches (and so its rows) do not depend on `heldout`
    x_tests = [enc([e.text_a for e in ex]) for ex in tests.values()]
    ends = np.cumsum([len(ex) for ex in tests.values()])[:-1]
    majority = Counter(y.tolist()).most_common(1)[0][0]
    out: list[Result] = []
    for f in p.features:
        x_test = np.concatenate([x[f] for x in x_tests])  # dev, then held out: one fit
        preds = np.split(classify(x_fit[f], y, x_test, seed), ends)
        for (name, ex), pred in zip(tests.items(), preds, strict=True):
            gold, label = _labels(ex), f"probe/{name}/{f}"
            out += [
                Result("accuracy", float((pred == gold).mean()), task=label),
                Result("answer_share", answer_share(pred.tolist(), []), task=label),
            ]
            if name != "sst2":  # what always answering the fit's majority scores there
                out.append(Result("majority", float((gold == majority).mean()), task=label))
    return [*out, Result("majority", float((_labels(dev) == majority).mean()), task="probe/sst2")]


def _pairs(enc: Any, examples: list[Example]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{feature: (u, v)} of sentence pairs encoded apart."""
    u, v = enc([e.text_a for e in examples]), enc([e.text_b or "" for e in examples])
    return {f: (u[f], v[f]) for f in u}


def _overlap(examples: list[Example]) -> np.ndarray:
    return np.asarray([[jaccard(e.text_a, e.text_b or "")] for e in examples])


@dataclass(frozen=True)
class PairSplits:
    """A sentence-pair task's training and dev examples, their features and labels."""

    train: list[Example]
    dev: list[Example]
    tr: dict[str, tuple[np.ndarray, np.ndarray]]  # feature -> (u, v), each [N, D]
    dv: dict[str, tuple[np.ndarray, np.ndarray]]
    y: np.ndarray  # [N]
    gold: np.ndarray  # [M]


def _pair_splits(name: str, enc: Any, p: ProbeParams, seed: int) -> PairSplits:
    train, dev = _examples(name, "train", p, seed), _examples(name, "eval", p, seed)
    return PairSplits(
        train, dev, _pairs(enc, train), _pairs(enc, dev), _labels(train), _labels(dev)
    )


def _mrpc(enc: Any, p: ProbeParams, seed: int) -> list[Result]:
    d = _pair_splits("mrpc", enc, p, seed)
    train, dev, tr, dv, y, gold = d.train, d.dev, d.tr, d.dv, d.y, d.gold
    out: list[Result] = []
    for f in p.features:
        pred = classify(pair_features(*tr[f]), y, pair_features(*dv[f]), seed)
        out += [
            Result("f1", _f1(pred, gold), task=f"probe/mrpc/{f}"),
            Result("accuracy", float((pred == gold).mean()), task=f"probe/mrpc/{f}"),
            Result("answer_share", answer_share(pred.tolist(), []), task=f"probe/mrpc/{f}"),
        ]
    overlap = classify(_overlap(train), y, _overlap(dev), seed)
    majority = np.full_like(gold, Counter(y.tolist()).most_common(1)[0][0])
    return [
        *out,
        Result("jaccard", _f1(overlap, gold), task="probe/mrpc"),
        Result("majority", _f1(majority, gold), task="probe/mrpc"),
    ]


def _stsb(enc: Any, p: ProbeParams, seed: int) -> list[Result]:
    d = _pair_splits("stsb", enc, p, seed)
    dev, tr, dv, y, gold = d.dev, d.tr, d.dv, d.y, d.gold
    out: list[Result] = []
    for f in p.features:
        ridge = regress(similarity_features(*tr[f]), y, similarity_features(*dv[f]), seed)
        out += [
            Result("pearson", pearson(cosines(*dv[f]), gold), task=f"probe/stsb/{f}-cosine"),
            Result("pearson", pearson(ridge, gold), task=f"probe/stsb/{f}-ridge"),
        ]
    return [*out, Result("jaccard", pearson(_overlap(dev)[:, 0], gold), task="probe/stsb")]


PROBES = {"sst2": _sst2, "mrpc": _mrpc, "stsb": _stsb}


def run_probe(ctx: TaskContext) -> list[Result]:
    p: ProbeParams = ctx.params
    if "last" in p.features and ctx.spec.kind != "decoder":
        raise UserError(
            "probe: features: `last` is a decoder's feature (an encoder reads both ways)"
        )
    model, tokenizer = _encoder(ctx)
    states: list[np.ndarray] = []

    def enc(texts: list[str]) -> dict[str, np.ndarray]:
        return encode(model, tokenizer, texts, p, states)

    results = [r for name in p.tasks for r in PROBES[name](enc, p, ctx.seed)]
    if not states:  # no STS-B: the diagnostics read its dev sentences all the same
        enc([e.text_a for e in _examples("stsb", "eval", p, ctx.seed)][:256])
    tokens = np.concatenate(states)[:DIAGNOSTIC_TOKENS]  # (N, D)
    return [
        *results,
        Result("token_cosine", token_cosine(tokens), task="probe/diagnostics"),
        Result("effective_rank", effective_rank(tokens), task="probe/diagnostics"),
    ]


def _data_digests(p: ProbeParams, suite_dir: Path) -> dict[str, str | None]:
    """The GLUE files the probes read (and STS-B dev, which the diagnostics read)."""
    names = [
        name
        for task in dict.fromkeys([*p.tasks, "stsb"])
        for split in ("train", "eval")
        for name in local_names(GLUE[task], split, "local", None)
    ]
    return short_digests({n: local_path(data_root(), n) for n in names})


def _describe(p: ProbeParams) -> str:
    n = f"at most {p.max_examples}" if p.max_examples else "all"
    return (
        f"frozen {', '.join(p.features)} features, {n} training examples, "
        "linear probes regularised on a held-out slice of train, scored on dev"
        + (f" and on {p.heldout} SST-2 training phrases kept out of the fit" if p.heldout else "")
    )


# a baseline fit to compare objectives on frozen features: above chance by a margin, and above
# its untrained twin by that margin where the suite has one (`harness.paper.sources.Check`)
PROBE_GATES = {
    "sst2": Gate(
        "accuracy",
        0.509,
        0.02,
        paper="mean-pooled BERT-base features: 85.5 % on SentEval's SST (Reimers & Gurevych, "
        "2019); the majority class of SST-2 dev is 50.9 %",
    ),
    # no bar against the untrained twin: mean-pooled BERT-base's cosine (0.47) is below
    # what untrained twins' random features score (0.62-0.64), so STS-B compares objectives
    # with each other and gates nothing beyond chance
    "stsb": Gate(
        "pearson",
        0.0,
        0.05,
        paper="mean-pooled BERT-base, cosine: Spearman 0.47 on STS-B (Reimers & Gurevych, 2019)",
        twin=False,
    ),
}


class ProbeTask(TaskType):
    name = "probe"
    description = (
        "frozen-feature probes (SST-2, MRPC logistic; STS-B cosine and ridge) with majority "
        "and token-overlap baselines, and token-state collapse diagnostics"
    )
    params = ProbeParams
    metrics = (
        "accuracy", "answer_share", "f1", "pearson", "majority", "jaccard", "token_cosine",
        "effective_rank",
    )  # fmt: skip
    gates = MappingProxyType(PROBE_GATES)

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_probe(ctx)

    def identity(self, params: ProbeParams, suite_dir: Path) -> Identity:
        return Identity(data=_data_digests(params, suite_dir))

    def describe(self, params: ProbeParams) -> str:
        return _describe(params)


PROBE = TASKS.add(ProbeTask.name, ProbeTask())
