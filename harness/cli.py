"""`hlm`: one command-line entry point with verbs, each a thin layer over a library function.

    hlm ls                          objectives, presets, task types, metrics
    hlm pretrain --preset bert-tiny --objective cwt --output-dir runs/x   (zoo.train.pretrain)
    hlm finetune-causal CKPT OUT    (zoo.train.finetune.finetune_causal)
    hlm validate SUITE...           (harness.suite.load_suite)
    hlm run SUITE                   (harness.runner.run_suite)
    hlm leaderboard SUITE           (harness.leaderboard)
    hlm plot SUITE                  (harness.plots)

User errors (unknown names, missing files, bad YAML, NaN loss) print one line per problem and
exit with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import types
import typing
from collections.abc import Sequence
from typing import Any

from zoo.errors import UserError


def _add_config_flags(parser: argparse.ArgumentParser, model: Any, skip: set[str]) -> None:
    """One --flag per field of a pydantic model, typed from its annotation, help from its description."""
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        flag = "--" + name.replace("_", "-")
        ann = field.annotation
        args = typing.get_args(ann)
        if typing.get_origin(ann) in (typing.Union, types.UnionType):
            ann = next(a for a in args if a is not type(None))
            args = typing.get_args(ann)
        origin = typing.get_origin(ann)
        default_txt = (
            ""
            if field.is_required()
            else f" (default: {field.get_default(call_default_factory=True)})"
        )
        help_txt = ((field.description or name.replace("_", " ")) + default_txt).replace("%", "%%")
        if ann is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=None, help=help_txt
            )
        elif origin is list:
            parser.add_argument(flag, nargs="+", default=None, help=help_txt)
        elif origin is tuple:
            parser.add_argument(flag, nargs=len(args), type=args[0], default=None, help=help_txt)
        elif origin is typing.Literal:
            parser.add_argument(flag, choices=list(args), default=None, help=help_txt)
        else:
            parser.add_argument(flag, type=ann, default=None, help=help_txt)


def cmd_ls(args: argparse.Namespace) -> int:
    from zoo.models import PRESETS
    from zoo.objectives import OBJECTIVES

    for plugin in args.plugin or []:
        from zoo.registry import load_plugin

        load_plugin(plugin)
    print("objectives:")
    for name, obj in OBJECTIVES.items():
        tag = "headless" if obj.headless else "vocab head"
        print(f"  {name:10s} [{tag}] {obj.description}")
    print("presets:")
    for name, builder in PRESETS.items():
        spec = builder()
        print(
            f"  {name:24s} {spec.kind:8s} L{spec.num_layers} H{spec.hidden_size} A{spec.num_heads} "
            f"V{spec.vocab_size} (family {spec.family})"
        )
    try:
        from harness.tasks import TASKS

        print("task types:")
        for name, task in TASKS.items():
            print(f"  {name:14s} {task.description}")
    except ImportError:
        pass
    return 0


def cmd_pretrain(args: argparse.Namespace) -> int:
    from zoo.train.config import PretrainConfig, load_config
    from zoo.train.pretrain import pretrain

    overrides = {k: getattr(args, k) for k in PretrainConfig.model_fields if hasattr(args, k)}
    cfg = load_config(args.config, overrides)
    final = pretrain(cfg, resume=args.resume)
    print(f"checkpoint: {final}")
    return 0


def cmd_finetune_causal(args: argparse.Namespace) -> int:
    from zoo.train.finetune import finetune_causal

    final = finetune_causal(
        args.checkpoint,
        args.output_dir,
        steps=args.steps,
        lr=args.lr,
        warmup_steps=args.warmup_steps,
        batch_size=args.batch_size,
        corpus=args.corpus,
        probe=args.probe,
        seed=args.seed,
    )
    print(f"checkpoint: {final}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from zoo.train.config import PretrainConfig

    parser = argparse.ArgumentParser(
        prog="hlm",
        description="headless-zoo: pretrain, compare and publish headless language models.",
    )
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = sub.add_parser("ls", help="list objectives, presets and task types")
    p.add_argument("--plugin", nargs="+", help="Python files that register objectives / tasks")
    p.set_defaults(func=cmd_ls)

    p = sub.add_parser(
        "pretrain",
        help="pretrain a model (flags and/or a YAML config)",
        description="Pretrain a preset with an objective. Unset numbers take the preset's paper recipe "
        "(Appendix D). Flags override the YAML config given with --config.",
    )
    p.add_argument("--config", help="YAML file with any of the flags below as keys")
    p.add_argument(
        "--resume", action="store_true", help="continue from the last checkpoint in --output-dir"
    )
    _add_config_flags(p, PretrainConfig, skip=set())
    p.set_defaults(func=cmd_pretrain)

    p = sub.add_parser(
        "finetune-causal",
        help="causal fine-tuning of a headless decoder (new LM head from the embeddings)",
        description="Give a headless decoder an LM head initialised from its input embeddings and train it "
        "with causal cross-entropy (paper section 3.3). Output loads with AutoModelForCausalLM.",
    )
    p.add_argument("checkpoint", help="a headless decoder checkpoint folder (e.g. runs/x/final)")
    p.add_argument("output_dir", help="where to write the fine-tuned run")
    p.add_argument("--steps", type=int, default=1000, help="fine-tuning steps (default: 1000)")
    p.add_argument(
        "--lr",
        type=float,
        default=1e-4,
        help="constant learning rate after warm-up (default: 1e-4)",
    )
    p.add_argument(
        "--warmup-steps", type=int, default=100, help="linear warm-up steps (default: 100)"
    )
    p.add_argument("--batch-size", type=int, help="micro-batch size (default: the pretraining one)")
    p.add_argument("--corpus", nargs="+", help="corpus sources (default: the pretraining corpus)")
    p.add_argument("--probe", action="store_true", help="train only the LM head (body frozen)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_finetune_causal)

    try:
        from harness.commands import add_harness_verbs

        add_harness_verbs(sub)
    except ImportError as exc:  # pragma: no cover - only while harness verbs are absent
        if "harness.commands" not in str(exc):
            raise
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Transparent huge pages for torch's large CPU tensors (read at torch's first allocation,
    # so before torch is imported): fresh activations, logits and score matrices are then
    # faulted in 2 MiB at a time instead of 4 KiB (docs/PERFORMANCE.md). Opt out with
    # THP_MEM_ALLOC_ENABLE=0.
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    import transformers

    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UserError as exc:
        for line in str(exc).splitlines():
            print(f"hlm {args.verb}: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"hlm {args.verb}: interrupted; finished work is kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
