"""`hlm pretrain`: pretrain a preset with an objective (`zoo.train.pretrain.pretrain`).

    hlm pretrain --preset bert-tiny --objective cwt --output-dir runs/x
    hlm pretrain --config run.yaml --lr 3e-4          # a flag overrides the file's key
    hlm pretrain --plugins my_loss.py --objective my-loss --loss.scale 2

Its flags are the run config's sections (`harness.cli.config_flags`), so a new config field is
a new flag with its type, range and help. A plugin file typed after --plugins is imported
before the flags are made (`preload`), so that its objective's options are flags too.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from harness.cli.config_flags import LOSS_DEST, add_config_flags, add_field_flag, loss_option_fields
from harness.cli.flags import add_trust
from harness.cli.parsing import verbosity

# Hugging Face Trainer's flags, where `hlm pretrain` has the same setting under its own name
FALSE_FRIENDS = {
    "--learning_rate": "--lr (the peak learning rate)",
    "--per_device_train_batch_size": "--micro-batch-size (sequences per forward pass; "
    "--batch-size is the global batch, reached by accumulation)",
    "--gradient_accumulation_steps": "--batch-size B with --micro-batch-size M (B / M / ranks "
    "accumulation steps)",
    "--max_grad_norm": "--grad-clip",
    "--logging_steps": "--log-every",
    "--max_steps": "--steps",
    "--warmup_steps": "--warmup-steps",
    "--weight_decay": "--weight-decay",
    "--output_dir": "--output-dir",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    from zoo.train.config import SECTIONS

    p.description = (
        "Pretrain a preset with an objective. Unset numbers take the preset's paper recipe "
        "(Appendix D). Flags override the YAML config given with --config."
    )
    p.add_argument("--config", help="YAML file with any of the flags below as keys")
    add_trust(p)
    p.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="continue from the newest verified checkpoint in --output-dir, or from the "
        "checkpoint PATH of that run (as Hugging Face's resume_from_checkpoint)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the config as given and the plan the preset's recipe resolves it to "
        "(steps, batch, tokens, rate, parameters), then stop: nothing is read or trained",
    )
    for section in SECTIONS:
        group = p.add_argument_group(section.__name__.removesuffix("Settings").lower())
        add_config_flags(group, section, skip={"loss", "pretrain_key"})
    group = p.add_argument_group(
        "loss options",
        "of every objective, plugins' included (--plugins first); checked "
        "against the chosen objective's own options",
    )
    for name, field in loss_option_fields().items():
        add_field_flag(group, name, field, LOSS_DEST, "loss.")


def run(args: argparse.Namespace) -> int:
    from zoo.train.config import PretrainConfig, load_config
    from zoo.train.pretrain import pretrain

    overrides: dict[str, Any] = {
        k: getattr(args, k) for k in PretrainConfig.model_fields if k != "loss" and hasattr(args, k)
    }
    overrides["loss"] = {
        k: getattr(args, LOSS_DEST + k)
        for k in loss_option_fields()
        if getattr(args, LOSS_DEST + k) is not None
    }
    if verbosity(args) < 0:
        overrides["progress"] = False
    from zoo.registry import plugins_trusted

    trusted = args.trust_plugins or plugins_trusted()
    cfg = load_config(args.config, overrides, trust_plugins=trusted)
    if args.dry_run:
        print(dry_run_plan(cfg))
        return 0
    final = pretrain(cfg, resume=args.resume)
    if os.environ.get("RANK", "0") == "0":  # under torchrun, once
        print(f"checkpoint: {final}")
    return 0


def preload(argv: list[str]) -> None:
    """The files typed after --plugins, imported before the flags are made, so that a plugin
    objective's options are flags too (`--loss.temperature`). A `--config` file's own
    `plugins:` are imported only after the config validates, and only with --trust-plugins
    (`zoo.train.config.load_config`)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plugins", nargs="+", default=[])
    known, _ = pre.parse_known_args(argv)
    from zoo.errors import UserError
    from zoo.registry import load_installed_plugins, load_plugin

    try:
        load_installed_plugins()
        for plugin in known.plugins:  # typed by the user: their choice
            load_plugin(plugin, trusted=True)
    except UserError as exc:  # as argparse ends on a bad flag: one line, status 2
        print(f"hlm pretrain: error: --plugins: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def dry_run_plan(cfg: Any) -> str:
    """The config as given (YAML, as `config.yaml` would hold it) and the numbers it resolves
    to: what `hlm pretrain` would train, without reading the corpus or building the model."""
    import json

    import yaml

    from zoo.models import get_spec
    from zoo.train.recipe import resolve_recipe

    spec = get_spec(cfg.preset, cfg.vocab_size)
    r = resolve_recipe(cfg, spec)
    tokens = r.steps * r.batch_size * r.seq_len
    plan = [
        f"{spec.name} ({spec.family} {spec.kind}), objective {cfg.objective}, vocabulary "
        f"{spec.vocab_size}: {spec.body_params() / 1e6:.2f}M body parameters",
        f"{r.steps} steps of {r.batch_size} x {r.seq_len} tokens = {tokens / 1e6:.1f}M tokens "
        f"(micro-batch {r.micro_batch_size} x {r.grad_accum} accumulated)",
        f"lr {r.lr:g}, {r.schedule} schedule, warm-up {r.warmup_steps} steps, weight decay "
        f"{r.weight_decay:g}; into {cfg.output_dir}",
    ]
    given = yaml.safe_dump(json.loads(json.dumps(cfg.as_given())), sort_keys=False)
    return "# config as given\n" + given + "# plan\n" + "\n".join(plan)
