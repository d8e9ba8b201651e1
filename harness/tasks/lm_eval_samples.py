"""lm-eval's logged samples, read for what the rows keep: the per-example scores (for the
paired test of single-seed comparisons) and, for a multiple-choice task, the choice made on
each question, whose most frequent share (`answer_share`) says whether an accuracy measures
the task or an answer bias (`harness.paper.answers`).

A logged sample of a multiple-choice task holds one (log-likelihood, is-greedy) pair per
choice in `filtered_resps`; the choice made is the one of highest log-likelihood, as lm-eval
scores `acc`.
"""

from __future__ import annotations

from typing import Any

from harness.results.metrics import METRICS
from harness.tasks.base import Result

# metrics lm-eval averages over examples: their per-example values are kept as samples, for
# the paired test of single-seed comparisons (perplexities aggregate otherwise: not kept)
PER_EXAMPLE = ("acc", "acc_norm", "exact_match", "likelihood_diff", "pct_stereotype")


def chosen(row: dict[str, Any]) -> int | None:
    """The choice a multiple-choice sample's model picked (the highest log-likelihood of its
    `filtered_resps`, one (log-likelihood, is-greedy) pair per choice), or None where the
    sample is not a choice among two or more."""
    resps = row["filtered_resps"] if "filtered_resps" in row else None
    if "acc" not in row or not isinstance(resps, list | tuple) or len(resps) < 2:
        return None
    scores = [r[0] if isinstance(r, list | tuple) and r else r for r in resps]
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in scores):
        return None
    return max(range(len(scores)), key=lambda i: scores[i])


def sample_scores(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, float]]:
    """(task, metric, filter) -> {doc_id: score} from lm-eval's logged samples; for a
    multiple-choice task also (task, "answer_share", filter) -> {doc_id: the choice made}."""
    out: dict[tuple[str, str, str], dict[str, float]] = {}
    for task, rows in (results["samples"] if "samples" in results else {}).items():
        for row in rows:
            filt = str(row["filter"]) if "filter" in row else "none"
            for name in PER_EXAMPLE:
                value = row[name] if name in row else None
                if isinstance(value, bool | int | float):
                    out.setdefault((task, name, filt), {})[str(row["doc_id"])] = float(value)
            if (choice := chosen(row)) is not None:
                out.setdefault((task, "answer_share", filt), {})[str(row["doc_id"])] = float(choice)
    return out


def answer_rows(samples: dict[tuple[str, str, str], dict[str, float]]) -> list[Result]:
    """One `answer_share` row per multiple-choice task: the share of its questions given the
    most frequent answer, the choices kept as its samples (`harness.paper.answers`)."""
    share = METRICS.get("answer_share")
    return [
        Result(
            "answer_share",
            share.score(list(choices.values()), []),
            task=f"lm_eval/{task}" if filt == "none" else f"lm_eval/{task}/{filt}",
            higher_is_better=None,
            samples=choices,
        )
        for (task, name, filt), choices in samples.items()
        if name == "answer_share" and choices
    ]
