"""`blimp` task: BLiMP's minimal pairs (Warstadt et al., TACL 2020), read from the local data
root (`blimp/<paradigm>.jsonl`, 67 paradigms of 1,000 pairs). A pair is right when the model
gives the grammatical sentence the higher score (`harness.downstream.minimal_pairs`): a
decoder's summed log-probability, an encoder's pseudo-log-likelihood; a tie counts half. No
training, so no fine-tuning noise; the untrained twin of a suite is scored as any model is.

Rows: accuracy per paradigm (`blimp/<paradigm>`), per field (`blimp/field-<field>`:
morphology, syntax, semantics, syntax_semantics) and over every pair scored (`blimp`), each
beside the BLiMP paper's reference models on the same paradigms (`ref_5gram`, `ref_lstm`,
`ref_txl`, `ref_gpt2`, from `models_summary.jsonl`: means over the paradigms scored). The
scorer (`head` or `cwt`) is the model's own: a headless model is scored by its output
against the input embeddings, which is said in each overall row (`cwt_scorer`: 1 or 0).
Decoders also run as an lm-eval task (`hlm_blimp`, shipped), so plain `lm_eval` scores them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import numpy as np
from pydantic import Field, field_validator

from harness.downstream.blimp_data import (
    PARADIGMS,
    REFERENCES,
    Pair,
    data_files,
    load_pairs,
    references,
)
from harness.results.gates import Gate
from harness.results.metrics import METRICS, Metric
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from harness.tasks.finetune_params import distinct
from zoo.checksums import short_digests
from zoo.data.corpus import data_root
from zoo.errors import UserError
from zoo.registry import unknown_name_message
from zoo.settings import Settings

_NAMES = {"ref_5gram": "a 5-gram model", "ref_lstm": "an LSTM", "ref_txl": "Transformer-XL"}
for _ref in REFERENCES:
    METRICS.add(
        _ref,
        Metric(
            _ref,
            None,
            "",
            f"BLiMP's accuracy for {_NAMES.get(_ref, 'GPT-2')} (Warstadt et al. 2020, their "
            "Table 3 models), the paradigms' mean",
            baseline=True,
        ),
    )
METRICS.add(
    "cwt_scorer",
    Metric("cwt_scorer", None, "", "1: scored by output against input embeddings; 0: by the head"),
)


class BlimpParams(Settings):
    paradigms: list[str] = Field(
        default_factory=list, max_length=67, description="paradigms (default: all 67)"
    )
    max_pairs: int | None = Field(
        None,
        gt=0,
        le=1000,
        description="pairs per paradigm at most, the same for every model (a pilot's subsample; "
        "unset: all 1,000)",
    )
    scorer: Literal["auto", "head", "cwt"] = Field(
        "auto",
        description="auto: the model's own (the vocabulary head where its objective trained "
        "one, else output against input embeddings)",
    )
    batch_tokens: int = Field(8192, gt=0, le=2**20, description="tokens a forward pass at most")

    @field_validator("paradigms")
    @classmethod
    def _known_once(cls, values: list[str]) -> list[str]:
        for name in values:
            if name not in PARADIGMS:
                raise ValueError(unknown_name_message("BLiMP paradigm", name, list(PARADIGMS)))
        return distinct(values) or values


def scorer_of(ctx: TaskContext, asked: str) -> Literal["head", "cwt"]:
    """The scorer a model is read with: as asked, or its own (`auto`)."""
    from zoo.objectives import OBJECTIVES
    from zoo.train.metadata import read_metadata

    if asked != "auto":
        return "head" if asked == "head" else "cwt"
    tuned = ctx.checkpoint is not None and read_metadata(ctx.checkpoint).causal_finetune
    return "head" if OBJECTIVES.get(ctx.objective).needs_head or tuned else "cwt"


def _rows(pairs: list[Pair], right: np.ndarray, refs: dict[str, dict[str, float]]) -> list[Result]:
    """Accuracy per paradigm, per field and overall (the overall row keeps each pair's score
    for paired tests), each with its reference models' means."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, pair in enumerate(pairs):
        groups[f"blimp/{pair.paradigm}"].append(i)
        groups[f"blimp/field-{pair.field}"].append(i)
        groups["blimp"].append(i)
    out = []
    for task, idx in groups.items():
        names = sorted({pairs[i].paradigm for i in idx})
        kept = (
            {f"{p.paradigm}/{p.pair_id}": float(r) for p, r in zip(pairs, right, strict=True)}
            if task == "blimp"
            else None
        )
        out.append(Result("accuracy", float(right[idx].mean()), task=task, samples=kept))
        out += [
            Result(metric, float(np.mean([refs[n][metric] for n in names])), task=task)
            for metric in REFERENCES
            if all(n in refs for n in names)
        ]
    return out


def run_blimp(ctx: TaskContext) -> list[Result]:
    from harness.downstream.minimal_pairs import sentence_scores
    from zoo.tokenizers import load_tokenizer
    from zoo.train.checkpoint import load_model

    p: BlimpParams = ctx.params
    if ctx.checkpoint is None:
        raise UserError("blimp needs a checkpoint")
    root = data_root()
    pairs = load_pairs(root, p.paradigms or list(PARADIGMS), p.max_pairs)
    model, tokenizer = load_model(str(ctx.checkpoint)).eval(), load_tokenizer(str(ctx.checkpoint))
    scorer = scorer_of(ctx, p.scorer)
    texts = [s for pair in pairs for s in (pair.good, pair.bad)]
    scores = sentence_scores(model, ctx.spec, tokenizer, texts, scorer, p.batch_tokens)
    good, bad = scores[0::2], scores[1::2]
    right = np.where(good > bad, 1.0, np.where(good == bad, 0.5, 0.0))  # a tie: a coin flip
    rows = _rows(pairs, right, references(root))
    return [*rows, Result("cwt_scorer", float(scorer == "cwt"), task="blimp")]


class BlimpTask(TaskType):
    name = "blimp"
    description = (
        "BLiMP minimal pairs (67 paradigms): accuracy of preferring the grammatical sentence, "
        "by summed log-probability (decoders) or pseudo-log-likelihood (encoders)"
    )
    params = BlimpParams
    metrics = ("accuracy", "cwt_scorer", *REFERENCES)
    gates = MappingProxyType(
        {
            "blimp": Gate(
                "accuracy",
                0.5,
                0.02,
                paper="the BLiMP paper's 5-gram model: 61.2 % over all pairs; GPT-2: 81.5 %",
            )
        }
    )

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_blimp(ctx)

    def identity(self, params: BlimpParams, suite_dir: Path) -> Identity:
        root, files = data_root(), data_files(params.paradigms or list(PARADIGMS))
        return Identity(data=short_digests({f: root / f for f in files}))

    def describe(self, params: BlimpParams) -> str:
        n = f"{params.max_pairs} pairs a paradigm" if params.max_pairs else "all pairs"
        return f"BLiMP, {n}, zero-shot, scored by the model's {params.scorer} scorer"


BLIMP = TASKS.add(BlimpTask.name, BlimpTask())
