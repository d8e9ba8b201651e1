"""Publishing to the Hugging Face Hub: checkpoints with model cards, leaderboards as datasets.

    publish_model("runs/pretrain/<key>/final", "me/bert-tiny-cwt")
    publish_leaderboard("quickstart", "me/headless-quickstart")

Files are staged in a temporary folder (or `--output-dir` DIR, which then holds exactly what would
be uploaded) and sent with `HfApi.upload_folder`; the local checkpoint and leaderboard are never
modified, and only the files of their manifest (`harness.publish.manifest`) are copied: no
link, device or FIFO, nothing someone dropped in. `--output-dir` may not lie inside the input
or hold it, and appears whole or not at all. Re-publishing unchanged files makes no new commit
(the client skips files whose remote blob id matches). The token comes from the usual places
(HF_TOKEN, the login cache) and is never written to a file, a card, a log line or an error
message.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.publish.cards import CardOptions, model_card
from harness.publish.dataset_card import dataset_card
from harness.publish.manifest import (
    checkpoint_manifest,
    copy_checkpoint,
    copy_entries,
    leaderboard_manifest,
    left_out,
    owned_file,
    stage_folder,
    warn_left_out,
)
from harness.publish.rebuild import rebuild_config
from harness.results.fields import cell_config
from harness.results.leaderboard import (
    known_model,
    read_cell_file,
    read_leaderboard,
    result_files,
)
from harness.results.schema import COLUMNS, SCHEMA_VERSION, folder_version
from harness.suite.record import SUITE_FILE
from zoo.checkpoint_files import check_weights
from zoo.errors import UserError
from zoo.reader import read_text
from zoo.train.atomic import COMMIT
from zoo.train.checkpoint import hf_config, load_model
from zoo.train.layout import FINETUNED, LEGACY_STATE, STATE
from zoo.train.metadata import read_metadata
from zoo.train.sharded import SHARDED
from zoo.writer import refuse_among_inputs, write_text
from zoo.yaml_files import read_yaml_mapping

log = logging.getLogger(__name__)


def _endpoint_flag(endpoint: str | None) -> str:
    return f" --endpoint {endpoint}" if endpoint else ""


def hub_url(repo: str, repo_type: str, endpoint: str | None) -> str:
    """The page of `repo` on the Hub it was published to."""
    base = (endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    return f"{base}/{'datasets/' if repo_type == 'dataset' else ''}{repo}"


def _scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def _token() -> str | None:
    from huggingface_hub import get_token

    return get_token()


def rows_for_checkpoint(
    checkpoint: Path, leaderboards: Path, suite: str | None = None, label: str | None = None
) -> pd.DataFrame:
    """Leaderboard rows of this checkpoint: cells whose pretraining key (and fine-tuning) match
    its folder under runs/pretrain/, or that evaluated this very folder (`hlm evaluate
    --leaderboard`), in `suite` and of model `label` where given. A card
    carries no other checkpoint's scores: rows of `label` from another pretraining (another
    seed, another run) are refused, never shown as this checkpoint's."""
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
        df = df[df["model"] == known_model(df, label, "--model")]
    cp = checkpoint.resolve()
    finetuned = cp.parent.name.startswith(FINETUNED)
    key = (cp.parent.parent if finetuned else cp.parent).name
    cfg = df["config"].map(cell_config)
    mask = cfg.map(
        lambda c: (
            (c.pretrain_key == key and c.finetune_causal == finetuned)
            or (c.checkpoint is not None and Path(c.checkpoint).resolve() == cp)
        )  # hlm evaluate's
    )
    if label is not None and not mask.any():
        raise UserError(
            f"--model {label}: its rows in {suite} come from other pretrainings than "
            f"{checkpoint} (pretraining key {key}): a card carries only its own checkpoint's "
            "scores; publish the checkpoint those rows were computed on"
        )
    return df[mask]


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
            "no Hugging Face token: set HF_TOKEN or run `hf auth login` (use --output-dir DIR to "
            "only write the files)"
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
                f"upload to {repo} failed ({type(exc).__name__}: {exc}); nothing local was "
                f"changed; retry: {retry}",
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
    endpoint: str | None = None,
    card: CardOptions | None = None,
) -> str:
    """Stage and upload a checkpoint folder with its card; returns the commit id (or the dry-run
    folder)."""
    ckpt = Path(checkpoint)
    if not (ckpt / "config.json").is_file():
        raise UserError(f"{checkpoint}: not a checkpoint folder (no config.json)")
    hf_config(str(ckpt))  # its files as written (commit marker) and a config that reads
    meta = read_metadata(ckpt)  # a clear error for a folder without (or a foreign) metadata
    check_weights(ckpt)  # headers that tell the truth, every weight finite (regular files)
    load_model(str(ckpt))  # weights that fit the architecture its config names
    entries = checkpoint_manifest(ckpt)  # what its save wrote: the only files copied
    rows = rows_for_checkpoint(ckpt, leaderboards, suite, label)
    refuse_unpublishable(rows, str(ckpt))
    options = card or CardOptions()
    rebuild = rebuild_config(ckpt, meta, options.base_model)  # the card's config, its plugins
    text = model_card(ckpt, repo, rows, options, rebuild)
    plugins = rebuild.plugins if rebuild is not None else []

    expected = (STATE, LEGACY_STATE, SHARDED, COMMIT)  # the copy gets a marker of its own
    warn_left_out(ckpt, left_out(ckpt, entries, lambda n: n in expected))

    def stage(d: Path) -> None:
        copy_checkpoint(entries, d)  # with a commit marker of the files it holds
        write_text(d / "README.md", text)
        for source, name in plugins:  # the code its card's config names
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            write_text(d / name, read_text(source, "a plugin file"))

    return _publish(
        stage,
        repo,
        "model",
        private,
        revision,
        dry_run,
        endpoint,
        f"Upload {ckpt.name} ({read_metadata(ckpt).objective})",
        f"hlm publish model {checkpoint} --repo {repo}" + _endpoint_flag(endpoint),
        inputs={"the checkpoint": ckpt},
    )


def publishable_files(directory: Path) -> list[Path]:
    """The result files a dataset repo gets: those of the suite as last run (the rows of
    cells it no longer has stay out), so the repo's rows are the ones `hlm leaderboard`
    shows. A file that does not read is refused, naming it: the repo would hold fewer rows
    than the folder, with nothing on the Hub to say so."""
    from harness.results.leaderboard import current_files, damaged_error, unread_files

    if folder_version(directory) < SCHEMA_VERSION and result_files(directory):
        raise UserError(
            f"{directory}: its result files are in leaderboard schema "
            f"{folder_version(directory)}, not {SCHEMA_VERSION} (columns missing from some "
            "files: `datasets` would refuse the repo); run `hlm leaderboard --migrate "
            f"{directory.name}` first"
        )
    unread = unread_files(directory)
    if unread:
        raise damaged_error(unread)
    files = current_files(directory)
    for f in files:
        refuse_unpublishable(read_cell_file(f).to_pandas(), str(f))
    return files


def refuse_unpublishable(rows: pd.DataFrame, source: str) -> None:
    """Rows a repo may not get: a value that is not finite, or one measurement twice (the
    same cell, seed, task, metric and step) in one file."""
    if rows.empty:
        return
    values = pd.to_numeric(rows["value"], errors="coerce").astype(float)
    bad = rows[~np.isfinite(values.to_numpy())]
    if not bad.empty:
        r = bad.iloc[0]
        raise UserError(f"{source}: {r['task']}/{r['metric']} is {r['value']}: not a finite number")
    same = ["cell_id", "seed", "task", "metric", "step"]
    twice = rows[rows.duplicated(same, keep=False)]
    if not twice.empty:
        r = twice.iloc[0]
        raise UserError(
            f"{source}: {r['task']}/{r['metric']} at step {r['step']} of cell {r['cell_id']} "
            f"holds {len(twice)} rows for one measurement"
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
    files = publishable_files(directory)
    if not files:
        raise UserError(f"no leaderboard files in {directory} (run `hlm run {suite}` first)")
    entries = leaderboard_manifest(directory, files, _recorded_plugins(directory))
    warn_left_out(directory, left_out(directory, entries, _board_own))

    def stage(d: Path) -> None:
        copy_entries(entries, d)
        plots_dir = d / "plots"
        plots_dir.mkdir()
        from harness.report.plots import make_plots
        from harness.results.leaderboard import current_cells
        from harness.results.samples import read_samples

        kept = read_samples(directory, current_cells(directory))
        rows = read_leaderboard(directory, damaged="refuse")
        plots = [p.name for p in make_plots(rows, plots_dir, kept)]
        write_text(d / "README.md", dataset_card(suite, directory, repo, license, plots))

    return _publish(
        stage,
        repo,
        "dataset",
        private,
        None,
        dry_run,
        endpoint,
        f"Upload leaderboard {suite} ({len(files)} cells)",
        f"hlm publish leaderboard {suite} --repo {repo}" + _endpoint_flag(endpoint),
        inputs={"the leaderboard": directory},
    )


def _recorded_plugins(directory: Path) -> list[str]:
    """The plugin files the leaderboard's `_suite.yaml` names (`_plugins/NAME`), or none."""
    record = directory / SUITE_FILE
    if not os.path.lexists(record):
        return []
    owned_file(directory, SUITE_FILE, "the suite record")
    plugins = read_yaml_mapping(record, "suite keys").get("plugins") or []
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise UserError(f"{record}: plugins: expected a list of file names")
    return plugins


def _board_own(name: str) -> bool:
    """Entries of a leaderboard folder a publish leaves out by design (bookkeeping, samples,
    files of cells the suite no longer has, a report), not worth a warning."""
    return name.startswith(("_", ".")) or name.endswith((".parquet", ".html"))


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
    inputs: dict[str, Path],
) -> str:
    if "/" not in repo or repo.count("/") != 1:
        raise UserError(f"--repo {repo!r}: expected OWNER/NAME")
    if dry_run is not None:
        out = Path(dry_run)
        refuse_among_inputs(out, inputs, "--output-dir")
        if os.path.lexists(out) and (out.is_symlink() or not out.is_dir() or any(out.iterdir())):
            raise UserError(f"--output-dir {dry_run}: exists and is not an empty folder")
        stage_folder(out, stage)
        return str(out)
    with tempfile.TemporaryDirectory(prefix="hlm-publish-") as tmp:
        stage(Path(tmp))
        return _upload(Path(tmp), repo, repo_type, private, revision, endpoint, message, retry)
