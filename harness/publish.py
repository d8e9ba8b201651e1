"""Publishing to the Hugging Face Hub: checkpoints with model cards, leaderboards as datasets.

    publish_model("runs/pretrain/<key>/final", "me/bert-tiny-cwt")
    publish_leaderboard("quickstart", "me/headless-quickstart")

Files are staged in a temporary folder (or `dry_run` DIR, which then holds exactly what would be
uploaded) and sent with `HfApi.upload_folder`; the local checkpoint and leaderboard are never
modified. Re-publishing unchanged files makes no new commit (the client skips files whose
remote blob id matches). The token comes from the usual places (HF_TOKEN, the login cache) and
is never written to a file, a card, a log line or an error message.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from harness.leaderboard import COLUMN_DOCS, COLUMNS, SCHEMA, aggregate, read_leaderboard
from harness.tables import render
from zoo.errors import UserError
from zoo.models import FAMILIES
from zoo.train.checkpoint import STATE
from zoo.train.metadata import CheckpointMetadata, read_metadata
from zoo.yaml_files import read_yaml_mapping

PAPER = (
    "Godey, de la Clergerie, Sagot. Headless Language Models: Learning without Predicting with "
    "Contrastive Weight Tying. ICLR 2024."
)


def _scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def _token() -> str | None:
    from huggingface_hub import get_token

    return get_token()


def rows_for_checkpoint(
    checkpoint: Path, leaderboards: Path, suite: str | None = None, label: str | None = None
) -> pd.DataFrame:
    """Leaderboard rows of this checkpoint: cells whose pretraining key (and fine-tuning) match
    its folder under runs/pretrain/, or the rows of `label` in `suite` when given."""
    frames = []
    dirs = (
        [leaderboards / suite] if suite else sorted(p for p in leaderboards.glob("*") if p.is_dir())
    )
    for d in dirs:
        df = read_leaderboard(d)
        if not df.empty:
            frames.append(df)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    df = pd.concat(frames, ignore_index=True)
    if label is not None:
        return df[df["model"] == label]
    cp = checkpoint.resolve()
    finetuned = cp.parent.name.startswith("finetune-causal-")
    key = (cp.parent.parent if finetuned else cp.parent).name
    cfg = df["config"].map(json.loads)
    mask = cfg.map(lambda c: c["pretrain_key"] == key and bool(c["finetune_causal"]) == finetuned)
    return df[mask]


def _kind_text(meta: CheckpointMetadata) -> str:
    if meta.causal_finetune is not None:
        return "headless decoder with a causally fine-tuned LM head"
    return ("headless " if meta.headless else "") + meta.kind


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
        f"| preset | `{meta.preset}` ({meta.family}) |",
        f"| pretraining objective | `{meta.objective}`{headless} |",
        f"| causal fine-tuning | {finetune} |",
        f"| parameters | {meta.params} |",
        f"| vocabulary | {meta.vocab_size} (tokenizer: {meta.tokenizer.vocab_size} entries) |",
        f"| corpus | {', '.join(meta.corpus)} |",
        f"| steps / batch / sequence | {meta.steps} / {meta.batch_size} / {meta.seq_len} |",
        f"| tokens seen | {meta.tokens_seen} |",
        f"| training FLOPs | {meta.train_flops:.3e} |",
        f"| wall seconds | {meta.wall_seconds:.1f} |",
        f"| seed | {meta.seed} |",
        f"| recipe | lr {r.lr}, {r.schedule} schedule, warm-up {r.warmup_steps}, weight decay {r.weight_decay} |",
        f"| versions | {', '.join(f'{k} {v}' for k, v in meta.versions.items())} |",
    ]


def model_card(checkpoint: Path, repo: str, rows: pd.DataFrame, license: str) -> str:
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    meta = read_metadata(checkpoint)
    family = FAMILIES.get(meta.family)
    auto = family.auto_class.__name__
    tags = ["headless-zoo", f"objective-{meta.objective}"]
    if meta.headless:
        tags += ["headless-lm", "contrastive-weight-tying"]
    latest = (
        rows.sort_values("step").groupby(["task", "metric", "seed"], dropna=False).tail(1)
        if not rows.empty
        else rows
    )
    eval_results = [
        EvalResult(
            task_type=family.pipeline_tag,
            task_name=str(r["task"]),
            dataset_type=f"headless-zoo/{r['suite']}",
            dataset_name=f"{r['suite']}: {r['task']}",
            metric_type=str(r["metric"]),
            metric_value=float(r["value"]),
            metric_name=f"{r['metric']} (seed {r['seed']})",
        )
        for r in latest.to_dict("records")
    ]
    data = ModelCardData(
        license=license,
        library_name="transformers",
        tags=tags,
        pipeline_tag=family.pipeline_tag,
        model_name=repo.split("/")[-1],
        eval_results=eval_results or None,
    )
    lines = [
        f"# {repo.split('/')[-1]}",
        "",
        f"A {_kind_text(meta)} pretrained with the `{meta.objective}` objective "
        f"(preset `{meta.preset}`) by headless-zoo, following {PAPER}",
        "",
        *_facts(meta),
        "",
        "## How to load",
        "",
        "```python",
        f"from transformers import {auto}, AutoTokenizer",
        "",
        f'model = {auto}.from_pretrained("{repo}")',
        f'tokenizer = AutoTokenizer.from_pretrained("{repo}")',
        "```",
        "",
    ]
    if meta.headless and meta.causal_finetune is None:
        lines += [
            "The LM head is the input embedding matrix (weight tying): this is the paper's "
            '"headless" evaluation; `hlm finetune-causal` gives a decoder a trained head.',
            "",
        ]
    lines += ["## Results", ""]
    if latest.empty:
        lines += ["No leaderboard rows were found for this checkpoint.", ""]
    else:
        table = latest[["suite", "task", "metric", "value", "seed", "step"]].sort_values(
            ["suite", "task", "metric", "seed"]
        )
        from tabulate import tabulate

        lines += [
            tabulate(table.to_dict("records"), headers="keys", tablefmt="github", showindex=False),
            "",
        ]
    lines += ["## Citation", "", PAPER, ""]
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines)))


def dataset_card(name: str, directory: Path, repo: str, license: str, plots: list[str]) -> str:
    from huggingface_hub import DatasetCard, DatasetCardData

    df = read_leaderboard(directory)
    suite_file = directory / "_suite.yaml"
    suite = read_yaml_mapping(suite_file, "suite keys") if suite_file.is_file() else {}
    suite_yaml = suite_file.read_text() if suite else ""
    data = DatasetCardData(
        license=license,
        tags=["headless-zoo", "leaderboard", "headless-lm"],
        pretty_name=f"headless-zoo {name} leaderboard",
        configs=[
            {"config_name": "default", "data_files": [{"split": "train", "path": "data/*.parquet"}]}
        ],
    )
    schema = "\n".join(f"| `{f.name}` | {f.type} | {COLUMN_DOCS[f.name]} |" for f in SCHEMA)
    parts = [
        f"# headless-zoo leaderboard: {name}",
        "",
        str(suite["description"] if "description" in suite else "").strip(),
        "",
        f"{len(df)} rows from {df['cell_id'].nunique() if not df.empty else 0} cells; one Parquet file per cell in `data/`.",
        "",
        "## Results (mean ± std over seeds, latest step)",
        "",
        render(aggregate(df), "md"),
        "",
        *[f"![{p}](plots/{p})" for p in plots],
        "",
        "## Schema",
        "",
        "| column | type | meaning |",
        "|---|---|---|",
        schema,
        "",
        "## Suite",
        "",
        "```yaml",
        suite_yaml.strip(),
        "```",
        "",
        "## Citation",
        "",
        PAPER,
        "",
    ]
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(parts)))


def _upload(
    staging: Path,
    repo: str,
    repo_type: str,
    private: bool,
    revision: str | None,
    endpoint: str | None,
    message: str,
    retry: str,
) -> str:
    from huggingface_hub import HfApi

    token = _token()
    if token is None:
        raise UserError(
            "no Hugging Face token: set HF_TOKEN or run `hf auth login` (use --dry-run DIR to only write the files)"
        )
    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)
    try:
        api.whoami()
        api.create_repo(repo, repo_type=repo_type, private=private, exist_ok=True)
        if revision and revision != "main":
            api.create_branch(repo, branch=revision, repo_type=repo_type, exist_ok=True)
        info = api.upload_folder(
            repo_id=repo,
            folder_path=staging,
            repo_type=repo_type,
            revision=revision,
            commit_message=message,
        )
    except Exception as exc:  # HTTP errors, refused connections (httpx), bad answers: all retryable
        raise UserError(
            _scrub(
                f"upload to {repo} failed ({type(exc).__name__}: {exc}); nothing local was changed; retry: {retry}",
                token,
            )
        ) from None
    return str(info.oid)


def publish_model(
    checkpoint: str | Path,
    repo: str,
    *,
    private: bool = False,
    revision: str | None = None,
    dry_run: str | Path | None = None,
    leaderboards: Path = Path("leaderboards"),
    suite: str | None = None,
    label: str | None = None,
    license: str = "apache-2.0",
    endpoint: str | None = None,
) -> str:
    """Stage and upload a checkpoint folder with its card; returns the commit id (or the dry-run folder)."""
    ckpt = Path(checkpoint)
    if not (ckpt / "config.json").is_file():
        raise UserError(f"{checkpoint}: not a checkpoint folder (no config.json)")
    read_metadata(ckpt)  # a clear error for a folder without (or with a foreign) metadata
    rows = rows_for_checkpoint(ckpt, leaderboards, suite, label)
    card = model_card(ckpt, repo, rows, license)

    def stage(d: Path) -> None:
        for f in sorted(ckpt.iterdir()):
            if f.is_file() and f.name != STATE and not f.name.startswith("."):
                shutil.copy2(f, d / f.name)
        (d / "README.md").write_text(card)

    return _publish(
        stage,
        repo,
        "model",
        private,
        revision,
        dry_run,
        endpoint,
        f"Upload {ckpt.name} ({read_metadata(ckpt).objective})",
        f"hlm publish model {checkpoint} --repo {repo}",
    )


def publish_leaderboard(
    suite: str,
    repo: str,
    *,
    private: bool = False,
    dry_run: str | Path | None = None,
    leaderboards: Path = Path("leaderboards"),
    license: str = "cc-by-4.0",
    endpoint: str | None = None,
) -> str:
    """Stage and upload a suite's Parquet files, plots, suite YAML and dataset card."""
    directory = leaderboards / suite
    files = sorted(p for p in directory.glob("*.parquet") if not p.name.startswith((".", "_")))
    if not files:
        raise UserError(f"no leaderboard files in {directory} (run `hlm run {suite}` first)")

    def stage(d: Path) -> None:
        (d / "data").mkdir()
        for f in files:
            shutil.copy2(f, d / "data" / f.name)
        plots_dir = d / "plots"
        plots_dir.mkdir()
        from harness.leaderboard import current_cells
        from harness.plots import make_plots
        from harness.samples import read_samples

        kept = read_samples(directory, current_cells(directory))
        plots = [p.name for p in make_plots(read_leaderboard(directory), plots_dir, kept)]
        if (directory / "_suite.yaml").is_file():
            shutil.copy2(directory / "_suite.yaml", d / "suite.yaml")
        (d / "README.md").write_text(dataset_card(suite, directory, repo, license, plots))

    return _publish(
        stage,
        repo,
        "dataset",
        private,
        None,
        dry_run,
        endpoint,
        f"Upload leaderboard {suite} ({len(files)} cells)",
        f"hlm publish leaderboard {suite} --repo {repo}",
    )


def _publish(
    stage: Any,
    repo: str,
    repo_type: str,
    private: bool,
    revision: str | None,
    dry_run: str | Path | None,
    endpoint: str | None,
    message: str,
    retry: str,
) -> str:
    if "/" not in repo or repo.count("/") != 1:
        raise UserError(f"--repo {repo!r}: expected OWNER/NAME")
    if dry_run is not None:
        out = Path(dry_run)
        if out.exists() and any(out.iterdir()):
            raise UserError(f"--dry-run {dry_run}: folder exists and is not empty")
        out.mkdir(parents=True, exist_ok=True)
        stage(out)
        return str(out)
    with tempfile.TemporaryDirectory(prefix="hlm-publish-") as tmp:
        stage(Path(tmp))
        return _upload(Path(tmp), repo, repo_type, private, revision, endpoint, message, retry)
