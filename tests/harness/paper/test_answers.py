"""An arm whose answers are mostly one class is found from its rows' `answer_share`, or from
its per-example scores and the gold answers where the rows lack it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.paper.answers import one_class
from harness.results.leaderboard import read_leaderboard
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


NO_ROWS = pd.DataFrame(columns=["model", "task", "metric", "seed", "step", "value"])


def _share_rows(model: str, shares: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": model,
            "task": "lm_eval/hlm_pubmedqa",
            "metric": "answer_share",
            "seed": list(range(len(shares))),
            "step": 100,
            "value": shares,
        }
    )


def test_a_two_class_arm_s_answers_are_known_from_its_scores(tmp_path: Path) -> None:
    root = _boolq(tmp_path, ["true", "false", "false", "true", "false"])
    no = _samples("m", [0, 1, 1, 0, 1])  # right on every "false", wrong on every "true"
    assert one_class(NO_ROWS, no, "m", "lm_eval/hlm_boolq", root) == (
        "gives 'no' to 100.0 % of questions (seed 0)"
    )
    mixed = _samples("m", [1, 1, 0, 0, 1])  # answers yes, no, yes, no, no: 60 % "no"
    assert one_class(NO_ROWS, mixed, "m", "lm_eval/hlm_boolq", root) == ""
    assert one_class(NO_ROWS, no, "other", "lm_eval/hlm_boolq", root) == ""  # no samples
    assert one_class(NO_ROWS, no, "m", "lm_eval/hlm_lambada", root) == ""  # no classes


def test_ninety_percent_one_answer_is_biased_and_eighty_nine_is_not(tmp_path: Path) -> None:
    """Of 100 questions, 50 "true": an arm right on all 50 "false" and on k of the "true"
    answers "no" to 100 - k of them."""
    root = _boolq(tmp_path, ["true"] * 50 + ["false"] * 50)
    at_90 = _samples("m", [1.0] * 10 + [0.0] * 40 + [1.0] * 50)
    at_89 = _samples("m", [1.0] * 11 + [0.0] * 39 + [1.0] * 50)
    assert one_class(NO_ROWS, at_90, "m", "lm_eval/hlm_boolq", root) == (
        "gives 'no' to 90.0 % of questions (seed 0)"
    )
    assert one_class(NO_ROWS, at_89, "m", "lm_eval/hlm_boolq", root) == ""


def test_the_rows_answer_share_is_read_first_and_per_seed() -> None:
    rows = _share_rows("m", [0.62, 0.95, 0.91])
    said = one_class(rows, pd.DataFrame(), "m", "lm_eval/hlm_pubmedqa")
    assert said == (
        "gives one answer to 95.0 % of questions (seed 1); "
        "gives one answer to 91.0 % of questions (seed 2)"
    )
    earlier = rows.assign(step=50, value=1.0)  # an earlier checkpoint is not the one compared
    final = pd.concat([earlier, rows.assign(value=0.5)])
    assert one_class(final, pd.DataFrame(), "m", "lm_eval/hlm_pubmedqa") == ""
    assert one_class(earlier, pd.DataFrame(), "m", "lm_eval/hlm_pubmedqa") != ""


def test_missing_gold_answers_fail_closed(tmp_path: Path) -> None:
    said = one_class(NO_ROWS, _samples("m", [1, 0]), "m", "lm_eval/hlm_boolq", tmp_path)
    assert said.startswith("its answers could not be checked")


def test_the_committed_decoders_answer_boolq_with_one_class() -> None:
    """The CPU decoders' BoolQ accuracy 0.3783 is the share of "false": two of three vanilla
    seeds answer "no" to all 3,270 questions, the third to 99.7 %; a CWT seed answers "yes"
    to 93.7 %."""
    board = ROOT / "leaderboards" / "paper-cpu-decoder"
    rows, samples = read_leaderboard(board), read_samples(board)
    assert one_class(rows, samples, "pythia-tiny-ce", "lm_eval/hlm_boolq") == (
        "gives 'no' to 100.0 % of questions (seed 0, 2); gives 'no' to 99.7 % of questions (seed 1)"
    )
    said = one_class(rows, samples, "pythia-tiny-cwt", "lm_eval/hlm_boolq")
    assert said == "gives 'yes' to 93.7 % of questions (seed 2)"
