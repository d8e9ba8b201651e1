"""`hlm publish model|leaderboard`: a checkpoint (with its model card) or a suite's leaderboard
(with its dataset card) uploaded to the Hugging Face Hub (`harness.publish.hub`).

    hlm publish model runs/x/final --repo me/bert-tiny-cwt --output-dir review/   # no upload
    hlm publish leaderboard paper-cpu-encoder --repo me/headless-encoder
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.flags import add_leaderboards, hub_repo_id, language_code


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Upload to the Hugging Face Hub with a generated card. The token comes from HF_TOKEN "
        "or the login cache and is never written anywhere. --output-dir DIR writes exactly "
        "the files that would be uploaded. HF_ENDPOINT (or --endpoint) selects another Hub."
    )
    what = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    pm = what.add_parser("model", help="a checkpoint folder (e.g. runs/pretrain/<key>/final)")
    pm.description = "A checkpoint as a model repo: its files, and a card with its rows' scores."
    pm.add_argument("checkpoint", help="a checkpoint folder, or a run's name (`hlm runs`)")
    pm.add_argument(
        "--suite",
        help="take the leaderboard rows of --model in this suite (default: rows whose "
        "pretraining key matches the checkpoint folder)",
    )
    pm.add_argument("--model", help="model label in --suite")
    pm.add_argument("--revision", help="branch to upload to (created if missing)")
    pm.add_argument("--license", default="apache-2.0")
    pm.add_argument(
        "--language",
        default="en",
        type=language_code,
        help="card metadata (default: en; omitted for a checkpoint trained on the synthetic "
        "corpus only)",
    )
    pm.add_argument(
        "--base-model",
        type=hub_repo_id,
        help="Hub id the checkpoint was fine-tuned from (card metadata)",
    )
    pm.add_argument("--repository-url", help="a code repository to link from the card")
    pl = what.add_parser("leaderboard", help="a suite's Parquet leaderboard, as a dataset repo")
    pl.description = "A suite's leaderboard as a dataset repo: its Parquet rows and a card."
    pl.add_argument("suite", help="suite name or YAML path")
    pl.add_argument("--license", default="cc-by-4.0")
    for q in (pm, pl):
        q.add_argument("--repo", required=True, help="OWNER/NAME on the Hub")
        q.add_argument("--private", action="store_true", help="create the repo private")
        q.add_argument(
            "--output-dir",
            metavar="DIR",
            help="write the files to DIR instead of uploading (a review before a publish)",
        )
        q.add_argument("--endpoint", help="Hub URL (default: $HF_ENDPOINT or huggingface.co)")
        add_leaderboards(q)


def run(args: argparse.Namespace) -> int:
    from harness.publish.hub import hub_url, publish_leaderboard
    from harness.publish.hub_names import PublishTarget
    from harness.suite import suite_name

    PublishTarget.from_flags(
        repo=args.repo,
        revision=args.revision if "revision" in vars(args) else None,
        license=args.license,
        endpoint=args.endpoint,
        repository_url=args.repository_url if "repository_url" in vars(args) else None,
    )
    if args.what == "model":
        out = _publish_model(args)
    else:
        out = publish_leaderboard(
            suite_name(args.suite),
            args.repo,
            private=args.private,
            dry_run=args.output_dir,
            leaderboards=Path(args.leaderboards),
            license=args.license,
            endpoint=args.endpoint,
        )
    kind = "model" if args.what == "model" else "dataset"
    print(
        f"dry run: files written to {out}"
        if args.output_dir
        else f"published {args.repo} (commit {out}): {hub_url(args.repo, kind, args.endpoint)}"
    )
    return 0


def _publish_model(args: argparse.Namespace) -> str:
    from harness.publish.cards import CardOptions
    from harness.publish.hub import publish_model
    from harness.results.leaderboard import no_results, result_files
    from zoo.errors import UserError
    from zoo.train.names import resolve_checkpoint

    if args.model is not None and args.suite is None:
        raise UserError("--model: names a model of --suite; give --suite too")
    if args.suite is not None and not result_files(Path(args.leaderboards) / args.suite):
        raise no_results(Path(args.leaderboards) / args.suite, args.suite)
    card = CardOptions(
        license=args.license,
        language=args.language,
        base_model=args.base_model,
        repository_url=args.repository_url,
    )
    return publish_model(
        resolve_checkpoint(args.checkpoint),
        args.repo,
        private=args.private,
        revision=args.revision,
        dry_run=args.output_dir,
        leaderboards=Path(args.leaderboards),
        suite=args.suite,
        label=args.model,
        endpoint=args.endpoint,
        card=card,
    )
