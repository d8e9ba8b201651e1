"""Each task type's `describe`: its params in words, as the report's protocol quotes them
(what ran, including what the suite left to a default)."""

from __future__ import annotations

from harness.tasks import TASKS
from harness.tasks.encoder_benchmarks import GLUE_DEFAULT
from harness.tasks.finetune_params import FinetuneParams, XNLIParams
from harness.tasks.lm_eval_task import LMEvalParams
from harness.tasks.validation import ValidationParams


def test_fine_tuning_names_the_default_tasks_and_the_default_rate() -> None:
    said = TASKS.get("glue").describe(FinetuneParams())
    assert f"of each task ({', '.join(GLUE_DEFAULT)})" in said
    assert said.startswith("fine-tuned 10 epochs (balanced CE, lr 1e-05, batch 32) on all the")
    capped = TASKS.get("glue").describe(
        FinetuneParams(tasks=["sst2"], loss="ce", max_examples=100, finetune_seeds=2)
    )
    assert "(plain CE, lr 5e-06, batch 32) on at most 100 training examples" in capped
    assert "mean of 2 fine-tuning runs, the data from the Hub" in capped


def test_xnli_says_its_set_up_and_where_the_local_split_comes_from() -> None:
    zero = TASKS.get("xnli").describe(XNLIParams(mode="zero-shot", source="local"))
    assert zero.startswith("zero-shot, ar, de, en, es, fr, hi, zh: fine-tuned 3 epochs")
    assert "training examples of English alone" in zero and "split 80/20" in zero
    translate = TASKS.get("xnli").describe(XNLIParams(languages=["fr"]))
    assert "of each language" in translate and "80/20" not in translate


def test_lm_eval_and_validation_say_what_they_scored() -> None:
    lm = TASKS.get("lm_eval").describe
    assert lm(LMEvalParams(tasks=["t"])) == "lm-eval, zero-shot, on every example"
    assert lm(LMEvalParams(tasks=["t"], limit=0.25)).endswith(
        "on the first 25% of each task's examples (lm-eval's limit)"
    )
    val = TASKS.get("validation").describe(ValidationParams(corpus=["a.txt"]))
    assert val == "scored on 8 batches of the pretraining micro-batch from a.txt"


def test_fine_tuning_on_hub_data_names_the_revision_read() -> None:
    glue = TASKS.get("glue").describe
    assert glue(FinetuneParams(revision="v1.0")).endswith("the data from the Hub (revision v1.0)")
    assert glue(FinetuneParams()).endswith("the data from the Hub (its main branch when read)")
    assert "Hub" not in glue(FinetuneParams(source="local"))
