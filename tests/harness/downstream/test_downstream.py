"""Downstream evaluation: metrics and balanced CE by hand, label mappings against the real
files, and every task type end to end on small slices of the local data."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import yaml

from harness.downstream.benchmarks import GLUE, SUPERGLUE, xnli
from harness.downstream.classifier import balanced_cross_entropy
from harness.downstream.data import label_id, load_examples
from harness.results.leaderboard import read_leaderboard
from harness.results.metrics import accuracy, f1, mcc, pearson, spearman
from harness.run.runner import run_suite
from harness.suite import SuiteError, load_suite
from zoo.errors import UserError

HERE = Path(__file__).parents[1]
SUITE = HERE / "data" / "downstream.yaml"
TASK_FOLDER = HERE.parents[1] / "suites" / "lm_eval_tasks"


def test_metrics_match_hand_computed_values() -> None:
    gold, pred = [1, 0, 1, 1, 0, 0], [1, 0, 0, 1, 1, 0]
    assert accuracy(pred, gold) == pytest.approx(4 / 6)
    # tp=2, fp=1, fn=1 -> precision 2/3, recall 2/3
    assert f1(pred, gold) == pytest.approx(2 / 3)
    # tn=2: mcc = (tp*tn - fp*fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn)) = (4-1)/sqrt(3*3*3*3)
    assert mcc(pred, gold) == pytest.approx(3 / 9)
    x, y = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    # ranks differ by (0, 1, -1, 0): rho = 1 - 6*2 / (4*15)
    assert spearman(x, y) == pytest.approx(1 - 12 / 60)
    mx, my = 2.5, 2.5
    cov = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    assert pearson(x, y) == pytest.approx(
        cov / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    )


def test_correlations_of_a_constant_prediction_are_zero_not_nan() -> None:
    # one repeated float32 value: np.std is ~2e-8, not 0; scipy alone answers NaN
    constant = np.full(1500, 0.1, dtype=np.float32)
    gold = np.arange(1500, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConstantInputWarning either
        assert pearson(constant, gold) == 0.0
        assert spearman(constant, gold) == 0.0
        assert pearson(gold, constant) == 0.0


def test_balanced_cross_entropy_equals_the_formula() -> None:
    logits = torch.tensor(
        [[2.0, 0.0, -1.0], [0.5, 0.5, 0.0], [0.0, 1.0, 3.0], [1.0, -1.0, 0.0], [0.0, 2.0, 0.0]]
    )
    labels = torch.tensor([0, 0, 2, 0, 1])
    ce = [-torch.log_softmax(logits[i], -1)[labels[i]].item() for i in range(5)]
    # classes 0, 1, 2 have frequencies 3/5, 1/5, 1/5; L_c sums the CE of each class
    expected = (ce[0] + ce[1] + ce[3]) / (3 / 5) + ce[4] / (1 / 5) + ce[2] / (1 / 5)
    assert balanced_cross_entropy(logits, labels).item() == pytest.approx(expected, rel=1e-6)
    # balanced: a class's total weight does not depend on how many examples it has
    assert balanced_cross_entropy(logits[:2], labels[:2]).item() == pytest.approx(
        (ce[0] + ce[1]) / 1.0, rel=1e-6
    )


def test_label_mappings_against_the_files(data_root) -> None:
    def load(task, split):
        return load_examples(task, split, "local", data_root)

    cola = load(GLUE["cola"], "eval")
    assert len(cola) == 1043 and {e.label for e in cola} == {0, 1} and cola[0].text_b is None
    mrpc_train, mrpc_dev = load(GLUE["mrpc"], "train"), load(GLUE["mrpc"], "eval")
    assert len(mrpc_train) == 3667 and len(mrpc_dev) == 408  # the BOM header is not a row
    assert mrpc_dev[0].text_a.startswith("He said the foodservice pie") and mrpc_dev[0].label == 1
    qnli = load(GLUE["qnli"], "eval")
    assert len(qnli) == 5463 and qnli[0].label == 0  # "entailment" -> 0, as nyu-mll/glue
    rte = load(GLUE["rte"], "eval")
    assert len(rte) == 277 and rte[0].label == 1  # "not_entailment" -> 1
    stsb = load(GLUE["stsb"], "eval")
    assert len(stsb) == 1500 and stsb[0].label == pytest.approx(5.0)
    assert len(load(GLUE["sst2"], "eval")) == 872
    cb = load(SUPERGLUE["cb"], "eval")
    assert (
        len(cb) == 56 and {e.label for e in cb} == {0, 1, 2} and cb[0].label == 1
    )  # contradiction
    assert len(load(SUPERGLUE["cb"], "train")) == 32
    copa = load(SUPERGLUE["copa"], "eval")
    assert len(copa) == 100 and copa[0].choices == (
        "The toilet filled with water.",
        "Water flowed from the spout.",
    )
    assert copa[0].label == 1 and copa[0].text_a.endswith("What happened as a result?")
    wic = load(SUPERGLUE["wic"], "eval")
    assert len(wic) == 638 and wic[0].label == 0 and wic[0].text_a.startswith("class: ")
    boolq = load(SUPERGLUE["boolq"], "eval")
    assert len(boolq) == 3270 and {e.label for e in boolq} == {0, 1}
    en_train, en_eval, fr_eval = (
        load(xnli("en"), "train"),
        load(xnli("en"), "eval"),
        load(xnli("fr"), "eval"),
    )
    assert (len(en_train), len(en_eval)) == (1992, 498)
    assert {e.label for e in en_eval} == {0, 1, 2} and [e.label for e in fr_eval] == [
        e.label for e in en_eval
    ]
    assert not any("\r" in e.text_b for e in fr_eval if e.text_b)
    # a premise and its three hypotheses sit wholly on one side of the split
    assert not {e.text_a for e in en_train} & {e.text_a for e in en_eval}
    assert [e.label for e in en_eval].count(0) == len(en_eval) // 3


def test_raw_labels_map_to_the_hubs_class_ids() -> None:
    """Labels as the files spell them: ints, bools, digit strings, the label's name, and a
    true/false in any case where the task's labels are false/true; anything else is named."""
    boolq, rte = SUPERGLUE["boolq"], GLUE["rte"]
    assert [label_id(boolq, x) for x in (True, 0, " 1 ", "false", "TRUE", "True")] == [
        1,
        0,
        1,
        0,
        1,
        1,
    ]
    assert label_id(rte, "not_entailment") == rte.labels.index("not_entailment")
    with pytest.raises(UserError, match=r"glue/rte: unknown label 'True' \(labels: "):
        label_id(rte, "True")  # true/false is no RTE label
    with pytest.raises(UserError, match=r"superglue/boolq: unknown label 'yes'"):
        label_id(boolq, "yes")


def test_missing_local_splits_and_offline_hub_are_clear(data_root) -> None:
    with pytest.raises(UserError, match="qqp: no local train files"):
        load_examples(GLUE["qqp"], "train", "local", data_root)
    with pytest.raises(UserError, match="use source: local"):
        load_examples(GLUE["cola"], "train", "hub", None)


def test_suite_validation_of_downstream_tasks(tmp_path, data_root) -> None:
    d = yaml.safe_load(SUITE.read_text())
    d["tasks"][0]["params"]["tasks"] = ["cola", "qqp", "colaa"]
    d["tasks"][2]["params"]["languages"] = ["en", "klingon"]
    shutil.copytree(TASK_FOLDER, tmp_path / "lm_eval_tasks")  # beside the suite written there
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(d))
    with pytest.raises(SuiteError) as err:
        load_suite(p)
    got = err.value.problems
    assert any("tasks[0].params.tasks[1]: qqp has no local train files" in g for g in got)
    assert any("tasks[0].params.tasks[2]: unknown task 'colaa'" in g for g in got)
    assert any("tasks[2].params.languages[1]: unknown XNLI language 'klingon'" in g for g in got)
    # an encoder is never handed to lm-eval's causal path; a decoder never fine-tuned on GLUE
    assert any(
        "tasks[3].type: 'lm_eval' applies to decoder models, but models[0] (bert-tiny-cwt) is an "
        "encoder (restrict" in g
        for g in got
    )
    assert any(
        "tasks[0].type: 'glue' applies to encoder models, but models[1] (pythia-tiny-cwt) is a "
        "decoder (restrict" in g
        for g in got
    )


@pytest.mark.slow
@pytest.mark.usefixtures("trust_plugins")  # a copy of the shipped task folder, hooks and all
def test_every_downstream_task_type_end_to_end(tmp_path, monkeypatch, data_root) -> None:
    d = yaml.safe_load(SUITE.read_text())
    shutil.copytree(TASK_FOLDER, tmp_path / "lm_eval_tasks")  # beside the suite written there
    enc, dec = dict(d), dict(d)
    enc.update(name="ds-enc", models=d["models"][:1], tasks=d["tasks"][:3])
    dec.update(name="ds-dec", models=d["models"][1:], tasks=d["tasks"][3:])
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    for suite in (enc, dec):
        p = tmp_path / f"{suite['name']}.yaml"
        p.write_text(yaml.safe_dump(suite))
        s = run_suite(p, root=tmp_path / "lb", progress=False)
        assert s.failed == [], s.failed
    e = read_leaderboard(tmp_path / "lb" / "ds-enc")
    tasks = set(e["task"])
    assert {
        "glue/cola",
        "glue/stsb",
        "glue/mrpc",
        "glue/average",
        "superglue/cb",
        "superglue/copa",
        "xnli-zero-shot/en",
        "xnli-zero-shot/fr",
        "xnli-zero-shot/average",
    } <= tasks
    cola = e[(e["task"] == "glue/cola") & ~e["metric"].isin(["majority", "answer_share"])]
    cola = cola[cola["metric"] != "answer_share@best"]
    assert set(cola["metric"]) == {"mcc", "mcc@best"} and cola["higher_is_better"].all()
    assert set(e[e["task"] == "glue/mrpc"]["metric"]) == {
        "accuracy",
        "accuracy@best",
        "f1",
        "f1@best",
        "majority",
        "answer_share",  # the share of its most frequent answer: 1.0 for a constant one
        "answer_share@best",
    }
    shares = e[e["metric"] == "answer_share"]
    assert set(shares["task"]) >= {"glue/cola", "glue/mrpc", "superglue/cb"}
    assert "glue/stsb" not in set(shares["task"])  # a regression has no answers to count
    assert shares["value"].between(1 / 3, 1).all() and shares["higher_is_better"].isna().all()
    majority = e[e["metric"] == "majority"].set_index("task")["value"]
    assert majority["glue/cola"] == 0.0  # one class everywhere: no correlation
    assert e["value"].between(-1, 1).all()
    dd = read_leaderboard(tmp_path / "lb" / "ds-dec")
    assert set(dd["model"]) == {
        "pythia-tiny-cwt",
        "pythia-tiny-cwt-ft",
    }  # headless, and headless + FT
    for model in ("pythia-tiny-cwt", "pythia-tiny-cwt-ft"):
        m = dd[dd["model"] == model]
        lam = m[m["task"] == "lm_eval/hlm_lambada"].set_index("metric")
        assert {"acc", "perplexity"} <= set(lam.index) and lam.loc["acc", "stderr"] >= 0
        assert not lam.loc["perplexity", "higher_is_better"]
        assert {
            "lm_eval/hlm_boolq",
            "lm_eval/hlm_crows_pairs_english",
            "lm_eval/hlm_pubmedqa",
            "lm_eval/flores_eng_ppl",
        } <= set(m["task"])
        boolq = m[m["task"] == "lm_eval/hlm_boolq"].set_index("metric")["value"]
        assert 0.5 <= boolq["answer_share"] <= 1  # two answers: the larger share
        assert set(m[m["task"] == "lm_eval/hlm_crows_pairs_english"]["metric"]) == {
            "likelihood_diff",
            "pct_stereotype",
        }
    ft_tokens = dd[dd["model"] == "pythia-tiny-cwt-ft"]["tokens_seen"].iloc[0]
    # fine-tuning tokens count on top of pretraining; its batch is a quarter of pretraining's
    assert ft_tokens == 10 * 4 * 64 + 5 * 1 * 64
    from harness.results.samples import read_samples

    kept = read_samples(tmp_path / "lb" / "ds-dec")  # lm-eval's per-example scores
    boolq = kept[(kept["task"] == "lm_eval/hlm_boolq") & (kept["metric"] == "acc")]
    assert set(boolq["value"]) <= {0.0, 1.0} and boolq.groupby("model").size().min() > 0
    mean = boolq[boolq["model"] == "pythia-tiny-cwt"]["value"].mean()
    acc = dd[
        (dd["model"] == "pythia-tiny-cwt")
        & (dd["task"] == "lm_eval/hlm_boolq")
        & (dd["metric"] == "acc")
    ]
    assert mean == pytest.approx(acc["value"].iloc[0])
    # lm-eval's own results JSON, with its version, beside each lm_eval cell
    kept_json = sorted((tmp_path / "lb" / "ds-dec" / "_artifacts").glob("*/lm_eval_results.json"))
    assert len(kept_json) == 2
    raw = json.loads(kept_json[0].read_text())
    assert raw["lm_eval_version"] and "hlm_boolq" in raw["results"]
    assert raw["config"]["model_args"]["dtype"] == "float32"  # the CPU here


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_finetuning_runs_on_the_device_asked(tiny_encoder, monkeypatch, device, caplog) -> None:
    from harness.downstream import classifier
    from harness.downstream.benchmarks import SYNTHETIC

    task = SYNTHETIC["agreement"]
    train = load_examples(task, "train", "local", None)[:16]
    dev = load_examples(task, "eval", "local", None)[:8]
    made = []
    head = classifier.HEADS[task.kind]
    spy = dataclasses.replace(head, load=lambda *a: made.append(head.load(*a)) or made[-1])
    monkeypatch.setitem(classifier.HEADS, task.kind, spy)
    cfg = classifier.FinetuneConfig(epochs=2, batch_size=8, lr=1e-4, device=device)
    with caplog.at_level("INFO", logger="harness.downstream.classifier"):
        history = classifier.finetune(tiny_encoder, task, train, {"dev": dev}, cfg)
    assert next(made[0].parameters()).device.type == device  # the model, so its batches too
    assert len(history) == 2 and set(history[0]["dev"]) == {"mcc", "accuracy", "answer_share"}
    # a line per epoch, with the primary metric as the history holds it
    lines = [r.getMessage() for r in caplog.records]
    assert [line.split(": epoch ")[1][:3] for line in lines] == ["1/2", "2/2"]
    assert f"dev {task.primary} {history[1]['dev'][task.primary]:.4g};" in lines[1]


class _Terminal(io.StringIO):
    """A captured stderr that says it is a terminal, as tqdm asks."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("in_run", "terminal"), [(True, True), (True, False), (False, True)])
def test_finetuning_steps_show_a_bar_under_the_runs_on_a_terminal_only(
    tiny_encoder, monkeypatch, in_run: bool, terminal: bool
) -> None:
    """Inside `hlm run` on a terminal, a GLUE cell's fine-tuning steps have their bar (its
    epochs and loss beside it); in a log file, or outside a run's bar, none."""
    from harness.downstream import classifier
    from harness.downstream.benchmarks import SYNTHETIC
    from harness.logs import CELL_PROGRESS

    task = SYNTHETIC["agreement"]
    train = load_examples(task, "train", "local", None)[:16]
    dev = load_examples(task, "eval", "local", None)[:8]
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    shown = CELL_PROGRESS.set(in_run)
    try:
        cfg = classifier.FinetuneConfig(epochs=2, batch_size=8, lr=1e-4)
        classifier.finetune(tiny_encoder, task, train, {"dev": dev}, cfg)
    finally:
        CELL_PROGRESS.reset(shown)
    said = err.getvalue()
    assert (f"{task.benchmark}/{task.name} lr 0.0001" in said) is (in_run and terminal), said
    assert ("4/4" in said and "epoch=2/2" in said) is (in_run and terminal)


def test_a_data_dir_that_would_never_be_read_is_refused(tmp_path) -> None:
    """`data_dir` roots local files; from the hub with no files of one's own it was accepted
    and ignored (a cell key of its own, the same scores)."""
    from pydantic import ValidationError

    from harness.tasks.finetune_params import FinetuneParams, XNLIParams

    for params in (FinetuneParams, XNLIParams):
        with pytest.raises(ValidationError, match=r"data_dir \(/d\) is read only with source"):
            params(data_dir="/d")
        assert params(data_dir="/d", source="local").data_dir == "/d"
        assert params(data_dir="/d", train_files={"sst2": ["t.tsv"]}).data_dir == "/d"


def test_finetuning_device_follows_the_machine_unless_asked() -> None:
    from harness.tasks.encoder_benchmarks import _config
    from harness.tasks.finetune_params import FinetuneParams

    auto = _config(FinetuneParams(), seed=0).device
    assert auto == ("cuda" if torch.cuda.is_available() else "cpu")
    assert _config(FinetuneParams(device="cpu"), seed=0).device == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="torch sees no CUDA device"):
            _config(FinetuneParams(device="cuda"), seed=0)


def test_synthetic_agreement_task_is_balanced_deterministic_and_disjoint() -> None:
    from harness.downstream.benchmarks import SYNTHETIC

    task = SYNTHETIC["agreement"]
    train, dev = (
        load_examples(task, "train", "local", None),
        load_examples(task, "eval", "local", None),
    )
    assert (len(train), len(dev)) == (2000, 500)
    assert sum(e.label for e in train) == 1000 and sum(e.label for e in dev) == 250
    assert load_examples(task, "train", "hub", None) == train  # built-in data: source is irrelevant
    assert (
        len({e.text_a for e in dev} & {e.text_a for e in train}) < 25
    )  # short sentences may repeat
    from zoo.data.synthetic import synthetic_corpus

    words = set(" ".join(synthetic_corpus(500)).lower().replace(".", "").split())
    dev_words = set(" ".join(e.text_a for e in dev).lower().replace(".", "").split())
    # same language as the pretraining corpus: verbs differ only by the agreement "-s"
    assert len({w.rstrip("s") for w in dev_words} - {w.rstrip("s") for w in words}) < 0.02 * len(
        dev_words
    )


def test_majority_baseline() -> None:
    from harness.downstream.benchmarks import GLUE
    from harness.downstream.data import Example
    from harness.tasks.encoder_benchmarks import majority

    sst2, stsb = GLUE["sst2"], GLUE["stsb"]
    train = [Example("a", None, 1.0)] * 3 + [Example("b", None, 0.0)]
    dev = [Example("c", None, 1.0), Example("d", None, 0.0), Example("e", None, 1.0)]
    row = majority("glue/sst2", sst2, train, dev)
    assert (row.metric, row.task, row.value) == ("majority", "glue/sst2", pytest.approx(2 / 3))
    scores = [Example("a", "b", s) for s in (1.0, 2.5, 4.0)]
    assert (
        majority("glue/stsb", stsb, scores, scores).value == 0.0
    )  # a constant correlates with nothing


def test_every_kind_of_task_has_its_labels_and_its_head() -> None:
    from typing import get_args

    from harness.downstream.classifier import HEADS, FinetuneConfig
    from harness.downstream.data import KIND_LABELS, Kind

    assert set(KIND_LABELS) == set(HEADS) == set(get_args(Kind))
    cfg = FinetuneConfig(loss="ce")
    logits = torch.tensor([[0.1, 2.0], [3.0, -1.0]])  # (B, 2)
    assert HEADS["classification"].predict(logits) == [1, 0]
    assert HEADS["regression"].predict(torch.tensor([[0.5], [1.5]])) == [0.5, 1.5]
    ce = HEADS["multiple_choice"].loss(logits, [1.0, 0.0], cfg)
    torch.testing.assert_close(ce, F.cross_entropy(logits, torch.tensor([1, 0])))
    mse = HEADS["regression"].loss(torch.tensor([[0.5], [1.5]]), [1.0, 1.0], cfg)
    torch.testing.assert_close(mse, torch.tensor(0.25))
    assert GLUE["stsb"].label("3.8") == pytest.approx(3.8) and GLUE["stsb"].num_labels == 1
    assert GLUE["sst2"].label("1") == 1 and GLUE["sst2"].num_labels == 2


@pytest.mark.parametrize("kind", ["classification", "regression", "multiple_choice"])
def test_every_head_starts_from_the_checkpoints_encoder(tiny_encoder, kind) -> None:
    """Fine-tuning starts from the pretrained encoder, weight for weight: only the pooler and
    the task's head are new (a key renamed between pretraining and fine-tuning would leave the
    encoder at its initial weights and make the pretrained model its own untrained twin)."""
    from transformers import AutoModelForMaskedLM

    from harness.downstream.classifier import HEADS

    task = {
        "classification": GLUE["sst2"],
        "regression": GLUE["stsb"],
        "multiple_choice": SUPERGLUE["copa"],
    }[kind]
    assert task.kind == kind
    pretrained = AutoModelForMaskedLM.from_pretrained(tiny_encoder).bert.state_dict()
    model = HEADS[kind].load(tiny_encoder, task)
    encoder = model.bert.state_dict()
    assert set(pretrained) == set(encoder) - {k for k in encoder if k.startswith("pooler.")}
    for name, weight in pretrained.items():
        torch.testing.assert_close(encoder[name], weight, rtol=0, atol=0, msg=name)


@pytest.mark.parametrize("kind", ["classification", "multiple_choice"])
def test_an_encoder_whose_body_does_not_load_is_refused(tiny_encoder, tmp_path, kind) -> None:
    """A checkpoint from elsewhere (no commit marker) whose body weight is stored under another
    name: Hugging Face would start that weight at random with a warning, and the fine-tuned
    score would stand for the pretrained model. It is refused, naming the weight."""
    import shutil

    from safetensors.torch import load_file, save_file

    from harness.downstream.classifier import HEADS

    foreign = tmp_path / "foreign"
    shutil.copytree(tiny_encoder, foreign)
    (foreign / "hlm_commit.json").unlink()
    task = GLUE["sst2"] if kind == "classification" else SUPERGLUE["copa"]
    HEADS[kind].load(foreign, task)  # as it was: it loads
    weights = load_file(foreign / "model.safetensors")
    lost = "encoder.layer.0.attention.self.query.weight"  # a body-only checkpoint's name
    weights["encoder.layer.0.attention.self.query_renamed.weight"] = weights.pop(lost)
    save_file(weights, foreign / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(UserError, match=r"weights do not fit.*missing keys: bert\." + lost):
        HEADS[kind].load(foreign, task)


def test_a_hub_revision_reaches_load_dataset_and_is_refused_with_local_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`revision` pins the Hub dataset every sub-task reads (the habit of lm-eval's task
    YAMLs); with local files it would never be read, so it is refused by key."""
    import datasets

    from harness.tasks.finetune_params import FinetuneParams

    asked: list[dict] = []

    def fake_load(name: str, config: str, split: str, revision: str | None) -> list[dict]:
        asked.append({"name": name, "split": split, "revision": revision})
        return [{"sentence": "a fine film", "label": 1, "idx": 0}]

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    exs = load_examples(GLUE["sst2"], "train", "hub", None, revision="abc123")
    assert [e.label for e in exs] == [1]
    assert asked == [{"name": GLUE["sst2"].hub[0], "split": "train", "revision": "abc123"}]
    with pytest.raises(ValueError, match=r"revision \(abc123\) pins Hub datasets"):
        FinetuneParams(source="local", revision="abc123")


def test_generated_data_reads_from_any_source_and_takes_no_revision(tmp_path) -> None:
    """The synthetic task's data is generated: `source: local` is as good as the default,
    and a Hub revision, which nothing would read, is refused by key."""
    suite = tmp_path / "s.yaml"
    head = "name: s\nmodels: [{preset: bert-tiny, objective: ce}]\ntasks: [{type: synthetic, "
    suite.write_text(head + "params: {source: local}}]\n")
    load_suite(suite)
    suite.write_text(head + "params: {revision: abc}}]\n")
    with pytest.raises(SuiteError, match=r"tasks\[0\]\.params\.revision: agreement's data is gen"):
        load_suite(suite)
