"""What we ran, in words (`harness.paper.labels`): a run label's steps, tokens and causal
fine-tuning, and an evaluation protocol, each read from the rows' cell configuration rather
than from a constant, and an error naming the model where a row does not say."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.paper.claims_file import findings
from harness.paper.document import render
from harness.paper.labels import machine_counts, protocol, run_label, run_on
from harness.results.leaderboard import write_cell
from tests.harness.paper.rows import PAPER, encoder_rows, paper_row, source_of


def test_a_fine_tuned_models_run_label_names_its_causal_fine_tuning_steps() -> None:
    """The `our run` column says what we ran: the fine-tuning steps come from the rows' cell
    configuration, not from a constant."""
    source = source_of(next(f for f in PAPER if f.key.startswith("table3: validation")))
    cell = {"finetune_causal": True, "finetune": {"steps": 180}}
    rows = pd.DataFrame(
        [
            {
                **paper_row(m, "validation", "val_ce", 5.0, 0, 3600),
                "tokens_seen": 1.47e7,
                "config": c,
            }
            for m, c in (("a-ce", "{}"), ("a-cwt-ft", json.dumps(cell)))
        ]
    )
    assert run_label(rows, "a-cwt-ft", source) == (
        "a-cwt-ft (3600 steps, 14.7M tokens, then 180 causal fine-tuning steps)"
    )
    assert run_label(rows, "a-ce", source) == "a-ce (3600 steps, 14.7M tokens)"
    assert "10,000 causal fine-tuning steps" in source.differs and "100 " not in source.differs


def test_a_run_label_reads_fine_tuning_steps_past_settings_it_does_not_know() -> None:
    """A row written with a fine-tuning setting this version lacks still names its steps; a
    row whose steps cannot be read is an error naming the model, not a label without them."""
    source = source_of(next(f for f in PAPER if f.key.startswith("table3: validation")))

    def rows(finetune: dict) -> pd.DataFrame:
        cell = {"finetune_causal": True, "finetune": finetune, "later_setting": 1}
        row = paper_row("a-cwt-ft", "validation", "val_ce", 5.0, 0, 3600)
        return pd.DataFrame([{**row, "tokens_seen": 1.47e7, "config": json.dumps(cell)}])

    later = rows({"steps": 180, "schedule": "cosine"})
    assert run_label(later, "a-cwt-ft", source).endswith("then 180 causal fine-tuning steps)")
    with pytest.raises(ValueError, match=r"a-cwt-ft: a row's config: finetune.steps: Input"):
        run_label(rows({"steps": "many"}), "a-cwt-ft", source)


def _glue_rows(params: dict[str, dict]) -> pd.DataFrame:
    """One glue/average row per model, its cell configuration holding `params[model]`."""
    return pd.DataFrame(
        [
            {
                **paper_row(m, "glue/average", "average", 0.5, 0),
                "config": json.dumps({"task": {"type": "glue", "params": p}, "model": m}),
            }
            for m, p in params.items()
        ]
    )


def test_the_protocol_is_read_from_the_params_the_cells_ran() -> None:
    """The report's `ours:` protocol comes from each arm's recorded task params (defaults
    filled by the task type), so a suite that fine-tunes longer or on more examples says so."""
    source = source_of(next(f for f in PAPER if f.key.startswith("table1-tokens: GLUE average")))
    rows = _glue_rows(
        {
            "bert-tiny-ce": {
                "tasks": ["sst2", "stsb"],
                "source": "local",
                "epochs": 3,
                "max_examples": 4000,
            },
            "bert-tiny-cwt": {"tasks": ["sst2", "stsb"], "max_eval_examples": 500},
        }
    )
    assert protocol(rows, "bert-tiny-ce", source) == (
        "fine-tuned 3 epochs (balanced CE, lr 1e-05, batch 32) on at most 4000 training "
        "examples of each task (sst2, stsb), scored on all of each one's evaluation split"
    )
    assert protocol(rows, "bert-tiny-cwt", source).startswith("fine-tuned 10 epochs (")
    assert "at most 500 examples of each one's evaluation split" in protocol(
        rows, "bert-tiny-cwt", source
    )
    assert "4000" not in source.differs and "3 epochs" not in source.differs


def test_the_protocol_of_a_validation_row_names_its_batches_and_text() -> None:
    source = source_of(next(f for f in PAPER if f.key.startswith("table3: validation")))
    row = paper_row("a-ce", "validation", "val_ce", 5.0, 0)
    cell = {"task": {"type": "validation", "params": {"batches": 4, "batch_size": 16}}}
    rows = pd.DataFrame([{**row, "config": json.dumps(cell)}])
    assert protocol(rows, "a-ce", source) == (
        "scored on 4 batches of 16 sequences from the run's held-out text"
    )


def test_the_protocol_of_an_lm_eval_row_names_its_limit() -> None:
    source = source_of(next(f for f in PAPER if f.key.startswith("figure7: batch sweep: LAMBADA")))
    cell = {"task": {"type": "lm_eval", "params": {"tasks": ["hlm_lambada"], "limit": 1000}}}
    row = paper_row("pythia-tiny-ce", "lm_eval/hlm_lambada", "acc", 0.0, 0)
    rows = pd.DataFrame([{**row, "config": json.dumps(cell)}])
    assert protocol(rows, "pythia-tiny-ce", source) == (
        "lm-eval, zero-shot, on the first 1000 examples of each task (lm-eval's limit)"
    )
    full = {"task": {"type": "lm_eval", "params": {"tasks": ["hlm_lambada"], "num_fewshot": 2}}}
    rows = pd.DataFrame([{**row, "config": json.dumps(full)}])
    assert protocol(rows, "pythia-tiny-ce", source) == "lm-eval, 2-shot, on every example"


def test_a_task_without_a_description_says_nothing_and_bad_params_are_named() -> None:
    """A task type without `describe` (synonyms) adds no protocol; params that no longer
    read are an error naming the model, not a protocol left out."""
    source = source_of(next(f for f in PAPER if f.key.startswith("appendix-a: cosine")))
    row = paper_row("bert-tiny-ce", "synonyms", "synonym_cosine", 0.2, 0)
    rows = pd.DataFrame([{**row, "config": json.dumps({"task": {"type": "synonyms"}})}])
    assert protocol(rows, "bert-tiny-ce", source) == ""
    glue = source_of(next(f for f in PAPER if f.key.startswith("table1-tokens: GLUE average")))
    bad = _glue_rows({"bert-tiny-ce": {"epochs": "many"}})
    with pytest.raises(ValueError, match=r"bert-tiny-ce: a row's task params do not read"):
        protocol(bad, "bert-tiny-ce", glue)


def test_a_machine_is_said_only_of_the_rows_that_record_it() -> None:
    """Rows written before the leaderboard kept `hardware` name no machine: the line gives
    each machine's share, the rest's count, and sums over the suites of a section."""
    amd = {"cpu x1: AMD EPYC": 87, "": 492}
    assert run_on(amd) == (
        "run on cpu x1: AMD EPYC (87 of 579 rows); the other 492 rows record no machine"
    )
    assert run_on({"cuda x1: H100": 4, "cpu x1: Xeon": 2}) == ("run on cpu x1: Xeon, cuda x1: H100")
    assert run_on({"": 80}) == "none of the 80 rows records its machine"
    assert run_on(amd, {"cpu x1: AMD EPYC": 3, "": 232}).startswith(
        "run on cpu x1: AMD EPYC (90 of 814 rows); the other 724"
    )
    assert run_on() == "" and run_on({}) == ""
    rows = pd.DataFrame({"hardware": ["cpu x1: A", None, "cpu x1: A"]})
    assert machine_counts(rows) == {"cpu x1: A": 2, "": 1}


def test_the_page_does_not_say_a_machine_of_rows_that_name_none(tmp_path) -> None:
    """The compared rows record no machine and the untrained twin's do: the scales table says
    how many rows the machine is known for, not that the suite was run on it."""
    root = encoder_rows(tmp_path, sst2_ce=0.78, gain=0.02)
    twin = {**paper_row("bert-tiny-untrained", "glue/sst2", "accuracy", 0.5, 0), "step": 0}
    write_cell(root / "paper-cpu-encoder", "twin", [{**twin, "hardware": "cpu x1: AMD EPYC"}])
    page = render(findings(root), root)
    assert "| cpu x1: AMD EPYC (1 of 112 rows); the other 111 rows record no machine |" in page
    assert "run on cpu x1: AMD EPYC." not in page
