"""An arm that answers one class to every question is found from its per-example scores."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.paper.answers import constant_answer
from harness.results.samples import read_samples

ROOT = Path(__file__).parents[3]


def _samples(model: str, correct: list[float], seed: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": model,
            "task": "lm_eval/hlm_boolq",
            "metric": "acc",
            "seed": seed,
            "step": 100,
            "key": [str(i) for i in range(len(correct))],
            "value": correct,
        }
    )


def _boolq(root: Path, labels: list[str]) -> Path:
    folder = root / "superglue" / "BoolQ"
    folder.mkdir(parents=True)
    lines = [json.dumps({"question": "q", "passage": "p", "label": x}) for x in labels]
    (folder / "val.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_an_arm_right_exactly_on_one_answer_answers_it_always(tmp_path: Path) -> None:
    root = _boolq(tmp_path, ["true", "false", "false", "true", "false"])
    no = _samples("m", [0, 1, 1, 0, 1])  # right on every "false", wrong on every "true"
    assert constant_answer(no, "m", "lm_eval/hlm_boolq", root) == (
        "answers 'no' to every question (seed 0)"
    )
    mixed = _samples("m", [1, 1, 0, 0, 1])  # right on answers of both kinds
    assert constant_answer(mixed, "m", "lm_eval/hlm_boolq", root) == ""
    assert constant_answer(no, "other", "lm_eval/hlm_boolq", root) == ""  # no samples of it
    assert constant_answer(no, "m", "lm_eval/hlm_lambada", root) == ""  # no classes


def test_missing_gold_answers_fail_closed(tmp_path: Path) -> None:
    said = constant_answer(_samples("m", [1, 0]), "m", "lm_eval/hlm_boolq", tmp_path)
    assert said.startswith("its answers could not be checked")


def test_the_committed_vanilla_decoders_answer_boolq_with_one_class() -> None:
    """The CPU decoders' BoolQ accuracy 0.3783 is the share of "false": two of three seeds
    answer "no" to all 3,270 questions."""
    samples = read_samples(ROOT / "leaderboards" / "paper-cpu-decoder")
    said = constant_answer(samples, "pythia-tiny-ce", "lm_eval/hlm_boolq")
    assert said == "answers 'no' to every question (seed 0, 2)"
