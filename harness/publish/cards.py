"""A checkpoint's Hub model card (a leaderboard's dataset card: `harness.publish.dataset_card`).

It is written with huggingface_hub's own card classes, so `ModelCard.load`, `metadata_load`
and `model_index_to_eval_results` read it back. Its model-index
holds only the model's own scores on benchmarks with a Hub dataset: each under the Hub task
type its task type names (`TaskType.hub_tasks`) and the dataset id and config it names
(`TaskType.hub_datasets`: `nyu-mll/glue` `sst2`, `EleutherAI/lambada_openai`, ...), at the
revision the task pinned (`revision:`) where it pinned one, averaged over seeds at the final
checkpoint. Trivial baselines (majority), best-epoch picks (@best), averages, validation on a
local corpus, throughput and analyses stay in the card's table. A headless checkpoint
without a trained head gets no fill-mask or generation widget: its pipeline tag is feature
extraction, and the card says what the model is for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from tabulate import tabulate

from harness.publish.rebuild import Rebuild, intermediate, rebuild_config
from harness.results.fields import cell_config
from harness.results.leaderboard import final_rows
from harness.results.metrics import metric_info
from harness.tasks import TASKS
from zoo.data.corpus import SYNTHETIC, hub_dataset, source_kind
from zoo.models import FAMILIES
from zoo.text import md_cell, md_code, md_heading
from zoo.train.body_only import is_body_only
from zoo.train.metadata import CheckpointMetadata, read_metadata

PAPER = (
    "Godey, de la Clergerie, Sagot. Headless Language Models: Learning without Predicting with "
    "Contrastive Weight Tying. ICLR 2024."
)
BIBTEX = """```bibtex
@inproceedings{godey2024headless,
  title     = {Headless Language Models: Learning without Predicting with Contrastive Weight Tying},
  author    = {Godey, Nathan and de la Clergerie, {\\'E}ric and Sagot, Beno{\\^i}t},
  booktitle = {The Twelfth International Conference on Learning Representations (ICLR)},
  year      = {2024},
  url       = {https://openreview.net/forum?id=ONPECq0Rk7}
}
```"""


@dataclass(frozen=True)
class CardOptions:
    """What a model card says beyond the checkpoint's metadata."""

    license: str = "apache-2.0"
    language: str | None = "en"  # omitted for a checkpoint trained on the synthetic corpus only
    base_model: str | None = None  # the Hub id a fine-tuned checkpoint started from
    repository_url: str | None = None  # linked from the card only when given


def _kind_text(meta: CheckpointMetadata) -> str:
    if meta.causal_finetune is not None:
        return "headless decoder with a causally fine-tuned LM head"
    return ("headless " if meta.headless else "") + meta.kind


def purpose(meta: CheckpointMetadata, body_only: bool = False) -> str:
    """What the checkpoint is for, in a sentence a Hub visitor reads first."""
    if meta.headless and meta.causal_finetune is None:
        if meta.kind == "encoder":
            shipped = (
                "It ships its transformer body alone (`AutoModel` loads it); a BERT pooler is "
                "at its initialisation, as no objective here trains one. "
                if body_only
                else "Its masked-LM head was never trained: read its hidden states. "
            )
            return (
                "Its headless objective scores output vectors against input embeddings and "
                f"trains no masked-LM head, so it is no fill-mask model. {shipped}Fine-tune it "
                "on downstream tasks (GLUE, SuperGLUE, XNLI) or embed text with it."
            )
        return (
            "Its LM head is its input embedding matrix (weight tying), never trained as a "
            "softmax over the vocabulary: for text generation, fine-tune it causally first "
            "(`hlm finetune-causal`), as the paper does."
        )
    tag = FAMILIES.get(meta.family).pipeline_tag
    return f"A {meta.kind} language model with a trained head, for {tag}."


def pipeline_tag(meta: CheckpointMetadata) -> str:
    """The Hub pipeline that fits: no widget that would output noise for a headless model."""
    if meta.headless and meta.causal_finetune is None:
        return "feature-extraction"
    return FAMILIES.get(meta.family).pipeline_tag


HubEntry = tuple[str, str, str, str | None]  # Hub task type, dataset id, config, revision


def _hub_entry(row: Mapping[Any, Any], kind: str) -> HubEntry | None:
    """(Hub task type, dataset id, config, revision) of a row that belongs in a model-index:
    the model's own score (no trivial baseline, no informational figure, no best-epoch pick)
    on a benchmark with a Hub dataset, under the task type its registration names for
    `kind`; the dataset revision its task pinned (`revision:`), None where it pinned none."""
    task = cell_config(row["config"]).task
    if task is None:
        return None
    task_type, params = task.type, task.params
    metric = str(row["metric"])
    info = metric_info(metric)
    if task_type not in TASKS or "@" in metric or info.baseline or info.higher_is_better is None:
        return None
    registered = TASKS.get(task_type)
    sub_task = str(row["task"]).partition("/")[2]
    if kind not in registered.hub_tasks or sub_task not in registered.hub_datasets:
        return None
    revision = params["revision"] if "revision" in params else None
    return (registered.hub_tasks[kind], *registered.hub_datasets[sub_task], revision)


def eval_results(rows: pd.DataFrame, meta: CheckpointMetadata) -> list[Any]:
    """One EvalResult per benchmark and metric the model itself scored (mean over seeds,
    final checkpoint), each under its Hub dataset id; the Hub groups them into one block per task
    and dataset. Everything else stays in the card's table."""
    from huggingface_hub import EvalResult

    if rows.empty:
        return []
    values: dict[tuple[str, str, HubEntry], list[float]] = {}
    for r in final_rows(rows).to_dict("records"):
        entry = _hub_entry(r, meta.kind)
        if entry is not None:
            values.setdefault((str(r["task"]), str(r["metric"]), entry), []).append(r["value"])
    out = []
    for (task, metric, (hub_task, dataset, config, revision)), seeds in sorted(
        values.items(), key=lambda kv: json.dumps(kv[0])
    ):
        out.append(
            EvalResult(
                task_type=hub_task,
                task_name=task,
                dataset_type=dataset,
                dataset_name=f"{dataset} ({config})",
                dataset_config=config,
                dataset_revision=revision,
                metric_type=metric,
                metric_value=sum(seeds) / len(seeds),
                metric_name=f"{metric} (mean of {len(seeds)} seed{'s' if len(seeds) > 1 else ''})",
            )
        )
    return out


def _source(meta: CheckpointMetadata) -> str:
    """Where the objective's code came from, where the checkpoint records it."""
    return f"; defined in {md_cell(meta.objective_source)}" if meta.objective_source else ""


def _facts(meta: CheckpointMetadata) -> list[str]:
    """The card's table of what the checkpoint is and how it was made."""
    r, ft = meta.recipe, meta.causal_finetune
    finetune = (
        f"yes: {ft.steps} steps at lr {ft.lr}, {ft.tokens} tokens, LM head initialised from the "
        "input embeddings"
        if ft is not None
        else "no"
    )
    headless = " (headless: no vocabulary projection in pretraining)" if meta.headless else ""
    return [
        "| | |",
        "|---|---|",
        f"| preset | `{md_code(meta.preset)}` ({md_cell(meta.family)}) |",
        f"| pretraining objective | `{md_code(meta.objective)}`{headless}{_source(meta)} |",
        f"| causal fine-tuning | {finetune} |",
        f"| parameters | {meta.params} |",
        f"| vocabulary | {meta.vocab_size} (tokenizer: {meta.tokenizer.vocab_size} entries) |",
        f"| corpus | {md_cell(', '.join(meta.corpus))} |",
        f"| steps / batch / sequence | {meta.steps} / {meta.batch_size} / {meta.seq_len} |",
        f"| tokens seen | {meta.tokens_seen} |",
        f"| training FLOPs | {meta.train_flops:.3e} |",
        f"| wall seconds | {meta.wall_seconds:.1f} |",
        f"| seed | {meta.seed} |",
        f"| recipe | lr {r.lr}, {r.schedule} schedule, warm-up {r.warmup_steps}, weight decay "
        f"{r.weight_decay} |",
        f"| versions | {md_cell(', '.join(f'{k} {v}' for k, v in meta.versions.items()))} |",
    ]


def _config_block(rebuild: Rebuild | None) -> list[str]:
    """The run that rebuilds the weights (every setting, loss options included), as `hlm
    pretrain --config` reads it in this repository (`harness.publish.rebuild`); nothing for
    a checkpoint that predates its record."""
    if rebuild is None:
        return []
    text = yaml.safe_dump(rebuild.config, sort_keys=True).rstrip()
    how = (
        "Save the block below as `config.yaml` in a clone of this repository; "
        "`hlm pretrain --config config.yaml --output-dir OUT` trains these weights again."
    )
    return [
        "## Training configuration",
        "",
        how,
        "",
        *rebuild.notes,
        "",
        "```yaml",
        text,
        "```",
        "",
    ]


def _results_table(rows: pd.DataFrame, step: int | None = None) -> list[str]:
    """The rows of the checkpoint: its run's final rows, or for an intermediate checkpoint
    (`step`) the rows of that step."""
    if step is not None:
        rows = rows[rows["step"] == step]
    if rows.empty:
        return ["No leaderboard rows were found for this checkpoint.", ""]
    latest = final_rows(rows) if step is None else rows
    table = latest[["suite", "task", "metric", "value", "seed", "step"]].sort_values(
        ["suite", "task", "metric", "seed"]
    )
    table["step"] = [("" if pd.isna(s) else int(s)) for s in table["step"]]
    for name in ("suite", "task", "metric"):  # names from rows anyone could send
        table[name] = table[name].map(md_cell)
    return [tabulate(table.to_dict("records"), headers="keys", tablefmt="github"), ""]


def _card_data(
    meta: CheckpointMetadata, repo: str, rows: pd.DataFrame, options: CardOptions
) -> Any:
    from huggingface_hub import ModelCardData

    tags = ["headless-zoo", f"objective-{meta.objective}"]
    if meta.headless:
        tags += ["headless-lm", "contrastive-weight-tying"]
    hub_corpora = [name for c in meta.corpus if (name := hub_dataset(c)) is not None]
    synthetic = all(source_kind(c) is SYNTHETIC for c in meta.corpus)
    return ModelCardData(
        license=options.license,
        library_name="transformers",
        tags=tags,
        pipeline_tag=pipeline_tag(meta),
        model_name=repo.split("/")[-1],
        base_model=options.base_model,
        datasets=hub_corpora or None,
        language=None if synthetic else options.language,
        eval_results=eval_results(rows, meta) or None,
    )


def model_card(
    checkpoint: Path,
    repo: str,
    rows: pd.DataFrame,
    options: CardOptions,
    rebuild: Rebuild | None = None,
) -> str:
    """The model card of `checkpoint`, with its leaderboard `rows`."""
    from huggingface_hub import ModelCard
    from transformers import AutoConfig

    meta = read_metadata(checkpoint)
    body_only = is_body_only(AutoConfig.from_pretrained(checkpoint))
    auto = "AutoModel" if body_only else FAMILIES.get(meta.family).auto_class_name
    step = meta.steps if intermediate(checkpoint) else None
    if step is not None:
        rows = rows[rows["step"] == step]
    made_by = "headless-zoo" + (f" ({options.repository_url})" if options.repository_url else "")
    lines = [
        f"# {md_heading(repo.split('/')[-1])}",
        "",
        f"A {_kind_text(meta)} pretrained with the `{meta.objective}` objective "
        f"(preset `{meta.preset}`) by {made_by}, following {PAPER}",
        "",
        purpose(meta, body_only),
        "",
        *(
            [f"**An intermediate checkpoint**: step {step} of its run, not its final weights.", ""]
            if step is not None
            else []
        ),
        *_facts(meta),
        "",
        *_config_block(rebuild or rebuild_config(checkpoint, meta, options.base_model)),
        "## How to load",
        "",
        "```python",
        f"from transformers import {auto}, AutoTokenizer",
        "",
        f'model = {auto}.from_pretrained("{repo}")',
        f'tokenizer = AutoTokenizer.from_pretrained("{repo}")',
        "```",
        "",
        "## Results",
        "",
        *_results_table(rows, step),
        "## Citation",
        "",
        BIBTEX,
        "",
    ]
    data = _card_data(meta, repo, rows, options)
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines)))
