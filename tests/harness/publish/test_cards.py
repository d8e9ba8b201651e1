"""Model and dataset cards (`harness.publish.cards`): what a fine-tuned card names, what
huggingface_hub's own parsers read back from the cards a publish uploads, and a model-index
that holds only the model's own scores under Hub dataset ids."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from huggingface_hub import ModelCard

from harness.cli import main as hlm
from harness.publish.cards import CardOptions, model_card
from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


def _headless_and_tuned(tmp_path: Path) -> tuple[Path, Path]:
    """A pythia-tiny pretrained 3 steps with `cwt`, and that model after 2 steps of causal
    fine-tuning."""
    tiny = dict(
        corpus=["synthetic:300"], vocab_size=600, steps=3, batch_size=4, seq_len=32, progress=False
    )
    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "p"), **tiny
        )
    )
    ft = finetune_causal(
        str(final),
        str(tmp_path / "ft"),
        CausalFinetuneConfig(steps=2, warmup_steps=1, progress=False),
    )
    return final, ft


def test_a_finetuned_card_names_the_pretraining_objective(tmp_path) -> None:
    _, ft = _headless_and_tuned(tmp_path)
    card = model_card(ft, "me/x", pd.DataFrame(), CardOptions())
    assert "pretrained with the `cwt` objective" in card and "objective-cwt" in card  # was `ce`
    assert "| causal fine-tuning | yes: 2 steps" in card


def test_cards_read_back_with_huggingface_hubs_parsers(trained, hub, capsys) -> None:
    from huggingface_hub.repocard import metadata_load

    root, ckpt = trained
    assert (
        hlm(
            [
                "publish",
                "model",
                str(ckpt),
                "--repo",
                "tester/cards",
                "--endpoint",
                hub.url,
                "--leaderboards",
                str(root / "lb"),
            ]
        )
        == 0
    )
    assert f"{hub.url}/tester/cards" in capsys.readouterr().out  # the Hub URL is printed
    text = hub.state.repos[("model", "tester/cards")].branches["main"]["README.md"].decode()
    readme = root / "README.md"
    readme.write_text(text)
    card = ModelCard.load(readme)  # what the Hub served, read as the Hub's client reads it
    meta = card.data.to_dict()
    assert meta["library_name"] == "transformers"
    assert meta["pipeline_tag"] == "feature-extraction"  # a headless encoder: no fill-mask widget
    assert "language" not in meta  # trained on the synthetic corpus only
    # validation loss on a local corpus and throughput are no Hub evaluations: the table only
    assert "model-index" not in meta and "val_loss" in text.split("## Results")[1]
    assert "trains no masked-LM head" in text and "@inproceedings{godey2024headless" in text
    assert "ships its transformer body alone" in text  # a body-only checkpoint, loaded as such
    assert 'model = AutoModel.from_pretrained("tester/cards")' in text
    assert "nan" not in text.split("## Results")[1].split("## Citation")[0]
    assert metadata_load(readme)["pipeline_tag"] == "feature-extraction"

    assert (
        hlm(
            [
                "publish",
                "leaderboard",
                "tiny",
                "--repo",
                "tester/cards-lb",
                "--endpoint",
                hub.url,
                "--leaderboards",
                str(root / "lb"),
            ]
        )
        == 0
    )
    assert f"{hub.url}/datasets/tester/cards-lb" in capsys.readouterr().out
    dcard = hub.state.repos[("dataset", "tester/cards-lb")].branches["main"]["README.md"].decode()
    assert "- **models** (2)" in dcard and "- **seeds**: 0, 1" in dcard
    assert "```yaml" not in dcard and "null" not in dcard.split("## Schema")[0]


def test_a_finetuned_card_names_its_base_and_serves_generation(tmp_path) -> None:
    final, ft = _headless_and_tuned(tmp_path)
    headless = ModelCard(model_card(final, "me/h", pd.DataFrame(), CardOptions())).data
    assert headless.pipeline_tag == "feature-extraction"
    card = ModelCard(model_card(ft, "me/x", pd.DataFrame(), CardOptions(base_model="me/h")))
    assert card.data.base_model == "me/h" and card.data.pipeline_tag == "text-generation"


def test_the_model_index_holds_only_the_models_own_scores_on_hub_datasets(tmp_path) -> None:
    """A fine-tuned benchmark's last-epoch metrics, under the benchmark's Hub dataset id and
    config; no trivial baseline (majority), no best-epoch pick (@best), no average, no local
    validation loss. The model-index reads back with huggingface_hub's parser."""
    from huggingface_hub.repocard_data import model_index_to_eval_results

    from harness.publish.cards import _card_data
    from tests.harness.results.test_leaderboard import row
    from zoo.train.metadata import CheckpointMetadata

    glue = json.dumps({"task": {"type": "glue", "params": {}}})
    lm = json.dumps({"task": {"type": "lm_eval", "params": {}}})
    val = json.dumps({"task": {"type": "validation", "params": {}}})
    rows = pd.DataFrame(
        [
            {**row("m", metric, value, seed=seed, task=task), "config": config}
            for seed in (0, 1)
            for task, metric, value, config in (
                ("glue/sst2", "accuracy", 0.8 + seed / 100, glue),
                ("glue/sst2", "accuracy@best", 0.9, glue),
                ("glue/sst2", "majority", 0.5, glue),
                ("glue/average", "average", 0.6, glue),
                ("validation", "val_loss", 3.0, val),
                ("lm_eval/hlm_lambada", "acc", 0.1, lm),
            )
        ]
    )
    meta = CheckpointMetadata.model_construct(
        kind="encoder", family="bert", objective="ce", headless=False, corpus=["corpus"],
        causal_finetune=None,
    )  # fmt: skip
    data = _card_data(meta, "me/m", rows, CardOptions())
    card = ModelCard.from_template(data)
    meta_dict = card.data.to_dict()
    assert meta_dict["pipeline_tag"] == "fill-mask"  # a vanilla encoder keeps its MLM head
    _, results = model_index_to_eval_results(meta_dict["model-index"])
    assert [(r.task_type, r.dataset_type, r.dataset_config, r.metric_type) for r in results] == [
        ("text-classification", "nyu-mll/glue", "sst2", "accuracy")
    ]
    assert results[0].metric_value == pytest.approx(0.805)


def test_a_pinned_benchmark_revision_reaches_the_model_index() -> None:
    """A task that pinned its Hub data (`revision:`) says so in the model-index; seeds at
    another revision (or none) are a separate entry, never averaged with it."""
    from huggingface_hub.repocard_data import model_index_to_eval_results

    from harness.publish.cards import _card_data
    from tests.harness.results.test_leaderboard import row
    from zoo.train.metadata import CheckpointMetadata

    pinned = json.dumps({"task": {"type": "glue", "params": {"revision": "abc123"}}})
    unpinned = json.dumps({"task": {"type": "glue", "params": {}}})
    rows = pd.DataFrame(
        [
            {**row("m", "accuracy", value, seed=seed, task="glue/sst2"), "config": config}
            for seed, value, config in ((0, 0.8, pinned), (1, 0.9, pinned), (2, 0.5, unpinned))
        ]
    )
    meta = CheckpointMetadata.model_construct(
        kind="encoder", family="bert", objective="ce", headless=False, corpus=["corpus"],
        causal_finetune=None,
    )  # fmt: skip
    card = ModelCard.from_template(_card_data(meta, "me/m", rows, CardOptions()))
    _, results = model_index_to_eval_results(card.data.to_dict()["model-index"])
    got = sorted((r.dataset_revision or "", r.metric_value) for r in results)
    assert got == [("", 0.5), ("abc123", pytest.approx(0.85))]


def test_a_dataset_card_holds_the_table_as_hlm_leaderboard_shows_it(tmp_path) -> None:
    """The card's results carry the leaderboard's marks against the suite's baseline, with
    the footnote that says what they mean, and no best-epoch column (never tested)."""
    from harness.publish.dataset_card import dataset_card
    from harness.results.leaderboard import write_cell
    from tests.harness.results.test_leaderboard import record_baseline, row

    board = tmp_path / "demo"
    rows = []
    for seed, b in enumerate([0.50, 0.52, 0.54]):
        for model, value in (("base", b), ("m", b + 0.2 + 0.001 * seed)):
            rows += [
                row(model, metric, value, seed, task="glue/sst2")
                for metric in ("accuracy", "accuracy@best")
            ]
    write_cell(board, "c", rows)
    record_baseline(board, "base", ("base", "m"))
    card = dataset_card("demo", board, "me/demo", "cc-by-4.0", [])
    line = next(x for x in card.splitlines() if x.startswith("| m "))
    assert "0.7210 ± 0.0210 †" in line
    assert "† better, ‡ worse than the baseline `base`" in card
    assert "over the leaderboard's 1 comparisons" in card and "@best" not in card


def test_a_dataset_card_escapes_names_from_its_rows_and_its_name(tmp_path) -> None:
    """A model label from the rows (files anyone could send) and the leaderboard's name
    reach the card as text: no raw HTML, no backtick that ends the code span early."""
    from harness.publish.dataset_card import dataset_card
    from harness.results.leaderboard import write_cell
    from tests.harness.results.test_leaderboard import row

    board = tmp_path / "demo"
    hostile = "m`<img src=x onerror=alert(1)>"
    write_cell(board, "c", [row(hostile, "accuracy", 0.5, task="glue/sst2")])
    card = dataset_card("demo<script>", board, "me/demo", "cc-by-4.0", [])
    body = card.split("---", 2)[2]
    outside_code = re.sub(r"```.*?```|`[^`\n]*`", "", body, flags=re.S)
    assert "<img" not in outside_code and "<script" not in outside_code  # HTML only as text
    assert "# headless-zoo leaderboard: demo&lt;script>" in body
    models = next(x for x in body.splitlines() if x.startswith("- **models**"))
    assert models == "- **models** (1): `m'<img src=x onerror=alert(1)>`"  # one code span


def test_the_license_file_is_the_one_the_package_and_model_cards_declare() -> None:
    """The code's LICENSE, pyproject's license and a model card's default agree (Apache
    2.0); leaderboard datasets default to CC-BY-4.0, a data license, said in their card."""
    import tomllib

    root = Path(__file__).parents[3]
    assert (
        "Apache License\n                           Version 2.0" in (root / "LICENSE").read_text()
    )
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
    assert CardOptions().license == "apache-2.0"
