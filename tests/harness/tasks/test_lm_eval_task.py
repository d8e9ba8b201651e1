"""The shipped lm-eval tasks with plain lm-eval (no project module imported), and the task
type's device / dtype choice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.tasks.lm_eval_task import (
    LMEvalParams,
    continuation_ids,
    device_and_dtype,
    loglikelihood_pairs,
)
from zoo.errors import UserError

ROOT = Path(__file__).resolve().parents[3]
PLAIN = """
import json, sys
import lm_eval
from lm_eval.tasks import TaskManager
manager = TaskManager(include_path=sys.argv[2:])
out = lm_eval.simple_evaluate(model="hf", model_args={"pretrained": sys.argv[1]},
    device="cpu", tasks=["hlm_lambada", "hlm_boolq", "hlm_crows_pairs_english", "hlm_pubmedqa",
           "flores_eng_ppl"], task_manager=manager, limit=2, batch_size=4)
ours = sorted(m for m in sys.modules if m.split(".")[0] in ("zoo", "harness"))
print(json.dumps({"tasks": sorted(out["results"]), "project_modules": ours}))
"""


@pytest.mark.slow
def test_shipped_tasks_run_with_plain_lm_eval(
    tmp_path: Path, data_root: Path, tiny_decoder: Path
) -> None:
    ckpt = tiny_decoder
    includes = [str(ROOT / "harness" / "lm_eval_tasks"), str(ROOT / "suites" / "lm_eval_tasks")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HLM_DATA_ROOT"] = str(data_root)
    proc = subprocess.run(
        [sys.executable, "-c", PLAIN, str(ckpt), *includes],
        cwd=tmp_path,  # not the repository: nothing of the project is importable by accident
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["tasks"] == sorted(
        ["hlm_lambada", "hlm_boolq", "hlm_crows_pairs_english", "hlm_pubmedqa", "flores_eng_ppl"]
    )
    assert got["project_modules"] == []


def test_device_and_dtype_follow_the_machine_unless_asked() -> None:
    import torch

    auto = device_and_dtype(LMEvalParams(tasks=["hlm_boolq"]))
    cuda = torch.cuda.is_available()
    assert auto == (("cuda", "bfloat16") if cuda else ("cpu", "float32"))
    asked = LMEvalParams(tasks=["hlm_boolq"], device="cpu", dtype="bfloat16")
    assert device_and_dtype(asked) == ("cpu", "bfloat16")
    if not cuda:
        with pytest.raises(UserError, match="torch sees no CUDA device"):
            device_and_dtype(LMEvalParams(tasks=["hlm_boolq"], device="cuda"))


@pytest.mark.parametrize(
    ("task", "label", "choices"),
    [
        ("hlm_boolq", "label", {"no": "false", "yes": "true"}),
        ("hlm_pubmedqa", "final_decision", {"yes": "yes", "no": "no", "maybe": "maybe"}),
    ],
)
def test_shipped_tasks_score_against_the_labels_of_the_local_files(
    data_root: Path, monkeypatch: pytest.MonkeyPatch, task: str, label: str, choices: dict
) -> None:
    """Each document's gold choice, as lm-eval resolves it, names that document's label in
    the local file (BoolQ's jsonl spells them "true"/"false": a truth test reads both as yes)."""
    from collections import Counter

    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("HLM_DATA_ROOT", str(data_root))
    manager = TaskManager(include_path=[str(ROOT / "harness" / "lm_eval_tasks")])
    built = manager.load(task)["tasks"][task]
    docs = list(built.eval_docs)
    targets = [(built.doc_to_target(d), built.doc_to_choice(d)) for d in docs]
    gold = Counter(t if isinstance(t, str) else names[t] for t, names in targets)
    truth = Counter(str(d[label]).lower() for d in docs)
    assert {choices[name]: n for name, n in gold.items()} == truth
    assert len(gold) >= 2  # both answers occur


def test_continuation_tokens_are_those_lm_eval_scores(tiny_decoder: Path) -> None:
    """Parity with lm-eval's own split of a (context, continuation) pair (`_encode_pair`),
    trailing spaces of the context included: the unigram bar scores the same tokens."""
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(tiny_decoder), device="cpu", batch_size=1)
    pairs = [
        ("the cat sat on the", " mat"),
        ("she handed him the letter and said", " goodbye"),
        ("a context that ends in spaces  ", "word"),
        ("numbers 12 and", " 345678"),
    ]
    for context, continuation in pairs:
        _, theirs = lm._encode_pair(context, continuation)
        assert continuation_ids(lm.tokenizer, context, continuation) == theirs, context


def test_loglikelihood_pairs_are_one_per_document() -> None:
    one = {"arguments": [("context", " target")], "filter": "none"}
    rows = [{**one, "doc_id": 0}, {**one, "doc_id": 0, "filter": "other"}, {**one, "doc_id": 1}]
    assert loglikelihood_pairs(rows) == [("context", " target")] * 2
    choices = {"doc_id": 0, "arguments": [("q", " yes"), ("q", " no")]}  # multiple choice
    assert loglikelihood_pairs([choices]) == []
    # as lm-eval's EvaluationTracker rewrites them in place when it saves the samples
    saved = {"doc_id": 0, "arguments": {"gen_args_0": {"arg_0": "context", "arg_1": " target"}}}
    assert loglikelihood_pairs([saved]) == [("context", " target")]


@pytest.mark.slow
def test_a_folders_task_may_not_take_a_name_already_given(tmp_path: Path) -> None:
    """A suite's task folder may add tasks, never replace one of lm-eval's or a shipped one
    (nor another folder's): rows under the name would read as the task everyone knows."""
    from harness.tasks.lm_eval_folders import SHIPPED, task_manager

    lambada = (SHIPPED / "hlm_lambada.yaml").read_text()

    def folder(name: str, *tasks: str) -> Path:
        d = tmp_path / name
        d.mkdir()
        (d / "hlm_utils.py").write_text((SHIPPED / "hlm_utils.py").read_text())
        for task in tasks:
            (d / f"{task}.yaml").write_text(lambada.replace("task: hlm_lambada", f"task: {task}"))
        return d

    mine, again, shipped = folder("a", "my_lambada"), folder("b", "my_lambada"), folder("c")
    (shipped / "hlm_lambada.yaml").write_text(lambada)
    with pytest.raises(UserError, match=r"c/hlm_lambada.yaml: the task name 'hlm_lambada' is "):
        task_manager([mine, shipped])
    with pytest.raises(UserError, match=r"b/my_lambada.yaml: .* taken by .*a/my_lambada.yaml"):
        task_manager([mine, again])
    manager = task_manager([mine, SHIPPED])  # the shipped folder named again adds nothing
    assert str(manager.task_index["my_lambada"].yaml_path).startswith(str(mine))
    assert str(manager.task_index["hlm_lambada"].yaml_path).startswith(str(SHIPPED))
