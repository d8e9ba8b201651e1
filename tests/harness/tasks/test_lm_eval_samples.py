"""lm-eval's logged samples: the choice made on each multiple-choice question, read as lm-eval
scores `acc`, and the `answer_share` row it gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks.lm_eval_samples import answer_rows, chosen, sample_scores

ROOT = Path(__file__).resolve().parents[3]


def _sample(doc: int, lls: list[float], target: int) -> dict:
    pick = max(range(len(lls)), key=lambda i: lls[i])
    resps = [(ll, False) for ll in lls]
    return dict(doc_id=doc, filter="none", filtered_resps=resps, target=target,
                acc=float(pick == target))  # fmt: skip


def test_the_choice_is_the_highest_log_likelihood() -> None:
    assert chosen(_sample(0, [-3.0, -1.0, -2.0], 0)) == 1
    assert chosen({"doc_id": 0, "acc": 1.0, "filtered_resps": [(-1.0, True)]}) is None  # one
    assert chosen({"doc_id": 0, "perplexity": 3.0, "filtered_resps": [(-1.0, True)] * 2}) is None
    assert chosen({"doc_id": 0, "acc": 1.0, "filtered_resps": [("a", True), (-1.0, 0)]}) is None


def test_an_answer_share_row_per_multiple_choice_task() -> None:
    rows = [_sample(i, [-1.0, -2.0] if i < 9 else [-2.0, -1.0], i % 2) for i in range(10)]
    results = {"samples": {"hlm_boolq": rows, "hlm_lambada": [{"doc_id": 0, "acc": 1.0}]}}
    (share,) = answer_rows(sample_scores(results))
    assert share.metric == "answer_share" and share.task == "lm_eval/hlm_boolq"
    assert share.value == pytest.approx(0.9) and share.higher_is_better is None
    assert share.samples == {str(i): (0.0 if i < 9 else 1.0) for i in range(10)}


@pytest.mark.slow
def test_real_lm_eval_samples_give_the_choice_acc_scored(data_root: Path, tiny_decoder: Path):
    """Against lm-eval itself: each logged BoolQ and PubMedQA sample's choice is right exactly
    where lm-eval's `acc` is 1."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(ROOT / "harness" / "lm_eval_tasks"))
    out = lm_eval.simple_evaluate(
        model="hf", model_args={"pretrained": str(tiny_decoder)}, device="cpu",
        tasks=["hlm_boolq", "hlm_pubmedqa"], task_manager=manager, limit=6, batch_size=4,
        log_samples=True,
    )  # fmt: skip
    scores = sample_scores(out)
    for task in ("hlm_boolq", "hlm_pubmedqa"):
        choices, acc = scores[task, "answer_share", "none"], scores[task, "acc", "none"]
        assert len(choices) == 6
        for row in out["samples"][task]:
            right = choices[str(row["doc_id"])] == row["target"]
            assert float(right) == acc[str(row["doc_id"])], (task, row["doc_id"])
