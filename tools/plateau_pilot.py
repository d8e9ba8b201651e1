"""The go/no-go figures of a pretraining pilot: has it left the MLM plateau, and how do its
token states and frozen features move along it (`suites/cpu-plateau-encoder.yaml`'s comment).

    HLM_DATA_ROOT=../shared/data python tools/plateau_pilot.py runs/pilot runs/untrained/final

For the run folder: the add-one unigram model's CE (the training text's token counts) on its
whole validation text, and the run's validation CE at each evaluated step. For each checkpoint
(the run's own, then any other given, such as the untrained twin): the `probe` task's token
state diagnostics on STS-B dev's first 4096 tokens and STS-B's zero-shot cosine of the mean
and static features, beside token overlap's.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from harness.downstream.probes import cosines, effective_rank, jaccard, pearson, token_cosine
from harness.tasks.probe import DIAGNOSTIC_TOKENS, ProbeParams, _examples, encode
from harness.tasks.unigram import unigram_perplexity
from zoo.data.cache import token_streams
from zoo.tokenizers import load_tokenizer
from zoo.train.checkpoint import load_model
from zoo.train.config import load_config
from zoo.train.layout import list_checkpoints


def run_figures(run: Path) -> None:
    cfg = load_config(str(run / "config.yaml"), {})
    tokenizer = load_tokenizer(str(run / "tokenizer"))
    text = cfg.training_text()
    train = token_streams(text.train, tokenizer, "encoder").counts("main")
    held = text.validation if text.validation is not None else text.train
    part = "main" if text.validation is not None else "held_out"
    scored = token_streams(held, tokenizer, "encoder").part(part)
    print(f"unigram CE on the validation text: {math.log(unigram_perplexity(train, scored)):.3f}")
    for line in (run / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "val_ce" in row:
            millions = row["tokens_seen"] / 1e6
            print(f"step {row['step']}: {millions:.1f}M tokens, val CE {row['val_ce']:.3f}")


def checkpoint_figures(checkpoints: list[Path]) -> None:
    p = ProbeParams(features=["mean", "static"])
    dev = _examples("stsb", "eval", p, 0)
    gold = np.asarray([e.label for e in dev])
    overlap = pearson(np.asarray([jaccard(e.text_a, e.text_b or "") for e in dev]), gold)
    print(f"STS-B dev, token overlap's Pearson: {overlap:.3f}")
    for ckpt in checkpoints:
        model, tokenizer = load_model(str(ckpt)).eval(), load_tokenizer(str(ckpt))
        states: list[np.ndarray] = []
        u = encode(model, tokenizer, [e.text_a for e in dev], p, states)
        v = encode(model, tokenizer, [e.text_b or "" for e in dev], p, [])
        tokens = np.concatenate(states)[:DIAGNOSTIC_TOKENS]
        said = ", ".join(f"{f}-cosine {pearson(cosines(u[f], v[f]), gold):.3f}" for f in u)
        print(
            f"{ckpt}: token cosine {token_cosine(tokens):.3f}, effective rank "
            f"{effective_rank(tokens):.1f}; STS-B {said}"
        )


def main(argv: list[str]) -> None:
    run, others = Path(argv[0]), [Path(a) for a in argv[1:]]
    run_figures(run)
    checkpoint_figures([*others, *list_checkpoints(run), run / "final"])


if __name__ == "__main__":
    main(sys.argv[1:])
