"""The value types of `hlm`'s flags and the flags several verbs share, from argparse alone.

    p.add_argument("--width", type=int_at_least(1))   # "0 is below 1": status 2, no traceback
    p.add_argument("--effect", type=positive)         # "'-1' is not above 0"
    p.add_argument("--task")                          # `text`: "empty; give a value"
    add_leaderboards(p)                               # --leaderboards ROOT
    lm_eval_flag(p, "num_fewshot", "-f")              # --num_fewshot, --num-fewshot and -f
    add_refused(p)                                    # lm_eval run's other flags: refused, why said

A flag's value is checked here once, as argparse parses it, so a bad value is a usage error
that names the flag, never an error deep inside the command.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Container
from typing import Any


def text(value: str) -> str:
    """Every flag's value unless it says otherwise (`harness.logs.VerbParser` makes it the
    default type): a word, never empty (`--task ''` matched every task; `--leaderboards ''`
    wrote into the working folder), never holding NUL."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty; give a value")
    if "\0" in value:
        raise argparse.ArgumentTypeError(f"{value!r} holds a NUL character")
    return value


def positive(value: str) -> float:
    """A size flag's value: a finite number above 0."""
    number = finite(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not above 0")
    return number


def int_at_least(low: int, most: int | None = None) -> Callable[[str], int]:
    """A count flag's type: a whole number of at least `low` (and at most `most`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{value} is above {most}")
        return value

    return parse


def finite(text: str) -> float:
    """A size flag's value: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def add_leaderboards(p: argparse.ArgumentParser) -> None:
    """--leaderboards: the root folder of the leaderboards a verb reads or writes."""
    p.add_argument(
        "--leaderboards",
        default="leaderboards",
        help="leaderboard root folder (default: leaderboards)",
    )


def add_max_cells(p: argparse.ArgumentParser) -> None:
    """--max-cells: the most cells a suite may expand to, counted before anything expands."""
    p.add_argument(
        "--max-cells",
        type=int_at_least(1),
        default=10_000,
        help="refuse a suite of more cells than this (sweep points x models x seeds x tasks, "
        "counted before expanding; default: 10000)",
    )


def add_trust(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--trust-plugins: the one way code that a file names runs (`zoo.registry.may_run_code`):
    a suite's or a run config's plugin files, lm-eval task folders (`include_path`), whose
    YAMLs run code (`!function`). Installed `hlm.plugins` packages need no flag."""
    p.add_argument(
        "--trust-plugins",
        action="store_true",
        help="let the files this command reads (a suite, a --config, a leaderboard's "
        "_suite.yaml) import the plugin files and lm-eval task folders they name: their code "
        "runs in this process. Without it they are refused, wherever they lie",
    )


def lm_eval_flag(p: argparse.ArgumentParser, name: str, *short: str, **kw: Any) -> None:
    """A flag under lm-eval's own name (`--num_fewshot`), its short form, and the dashed
    spelling (`--num-fewshot`) this CLI uses elsewhere; all of them one flag."""
    dashed = name.replace("_", "-")
    names = [f"--{name}", *([f"--{dashed}"] if dashed != name else []), *short]
    p.add_argument(*names, dest=name, **kw)


LM_EVAL_SEEDS = "0,1234,1234,1234"  # lm-eval's default: random, numpy, torch, few-shot


def lm_eval_seeds(text: str) -> list[int | None]:
    """lm-eval's `--seed`: one integer for all four seeds, or four (three: the few-shot one
    at its default) comma-separated, `None` leaving one unset."""

    def one(item: str) -> int | None:
        item = item.strip()
        if item.lower() == "none":
            return None
        if not item.isdigit():
            raise argparse.ArgumentTypeError(f"{item!r}: a seed is an integer >= 0 or None")
        return int(item)

    items = [one(x) for x in text.split(",")]
    if len(items) == 1:
        return items * 4
    if len(items) not in (3, 4):
        raise argparse.ArgumentTypeError(
            "one integer, or 4 comma-separated (random, numpy, torch, few-shot), as lm-eval's"
        )
    return items + [one(x) for x in LM_EVAL_SEEDS.split(",")][len(items) :]


# flags other tools give a meaning ours name otherwise: the names to use here
FALSE_FRIENDS = {
    "--save-steps": "--save-every N (a checkpoint every N steps, as Hugging Face's --save-steps) "
    "or --save-at-steps N [N ...] (at these steps)",
    "--save_steps": "--save-every N (a checkpoint every N steps, as Hugging Face's --save_steps) "
    "or --save-at-steps N [N ...] (at these steps)",
    "--resume_from_checkpoint": "--resume [PATH]",
    "--dry-run": "--write-to DIR (hlm publish writes the files it would upload there); "
    "--dry-run is hlm run's plan",
}

# Hugging Face Trainer's flags, where `hlm pretrain` has the same setting under its own name
TRAINER_NAMES = {
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


PLUGIN_LOSS_FLAG = (
    "--plugins FILE (a plugin objective's loss options are flags once its file is named "
    "there; a --config file's plugins are imported only after the flags are read)"
)


# lm_eval run's flags `hlm evaluate` does not take -> why
REFUSED_FLAGS: dict[str, str] = {
    "gen_kwargs": "hlm keeps each task's own generation settings, so a leaderboard row means "
    "one protocol; run other settings under lm_eval itself",
    "apply_chat_template": "a zoo checkpoint has no chat template: prompts are the task's text",
    "fewshot_as_multiturn": "it needs a chat template, which a zoo checkpoint has none of",
    "system_instruction": "a system prompt is part of a chat template; a zoo checkpoint has none",
    "use_cache": "a cached answer would be read back as this checkpoint's: hlm evaluates afresh",
    "cache_requests": "hlm builds each task's requests afresh, so an edited task is never stale",
    "check_integrity": "it runs lm-eval's own task tests: run them with lm_eval",
    "write_out": "--log_samples keeps every prompt and answer, beside the scores",
    "show_config": "--output_path writes lm-eval's results file, its config block included",
    "predict_only": "hlm records scores; predictions alone are lm_eval's (--log_samples keeps "
    "them beside the scores)",
    "samples": "a leaderboard row scores a task's first --limit examples, not chosen ones",
    "max_batch_size": "--batch_size auto:N bounds the automatic search as hlm runs it",
    "wandb_args": "hlm's record is its leaderboard (`hlm publish leaderboard` uploads it)",
    "wandb_config_args": "hlm's record is its leaderboard (`hlm publish leaderboard` uploads it)",
    "trackio_args": "hlm's record is its leaderboard (`hlm publish leaderboard` uploads it)",
    "hf_hub_log_args": "`hlm publish leaderboard` uploads the rows and lm-eval's files",
    "verbosity": "hlm's -v (debug) and -q (warnings only) set the log level",
    "trust_remote_code": "hlm never runs a checkpoint's code: a zoo checkpoint loads as a plain "
    "transformers model",
    "confirm_run_unsafe_code": "hlm evaluate runs no task that executes generated code",
    "metadata": "hlm passes lm-eval the metadata lm_eval run does (the model args), nothing else",
    "config": "hlm evaluate reads its arguments from the command line; a suite is its file",
}

# --model_args keys `hlm evaluate` does not take -> why
REFUSED_MODEL_ARGS: dict[str, str] = {
    "trust_remote_code": REFUSED_FLAGS["trust_remote_code"],
    "max_length": "the checkpoint's own context length is used, so rows of one model compare",
    "add_bos_token": "the checkpoint's tokenizer decides, as it did in pretraining",
    "revision": "a row names its checkpoint, not a revision: give a local folder or the hub "
    "id at the revision you mean, downloaded (`hf download --revision`)",
    "parallelize": "hlm evaluate runs one device (--device)",
}


def add_refused(p: argparse.ArgumentParser) -> None:
    """Each refused flag, under lm-eval's name and the dashed one, with or without a value,
    hidden from --help."""
    for name in REFUSED_FLAGS:
        names = {f"--{name}", f"--{name.replace('_', '-')}"}
        p.add_argument(
            *sorted(names), dest=f"refused_{name}", nargs="?", const="given", help=argparse.SUPPRESS
        )


def refused(args: argparse.Namespace) -> list[str]:
    """`--FLAG: why` for each refused flag given."""
    return [
        f"--{name}: hlm evaluate does not take it: {why}"
        for name, why in REFUSED_FLAGS.items()
        if getattr(args, f"refused_{name}", None) is not None
    ]


def one_spelling(
    parser: argparse.ArgumentParser, argv: list[str], verbs: Container[str]
) -> list[str]:
    """`argv` with each flag the verb knows only in the other spelling respelt: dashes and
    underscores are one (`--vocab_size` is `--vocab-size`, `--output-path` `--output_path`),
    as Hugging Face's and lm-eval's users type them. A flag known as written stays; `verbs`:
    the names `parser`'s sub-parsers answer to."""
    if not argv or argv[0] not in verbs:
        return argv
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = sub.choices[argv[0]]._option_string_actions
    out = argv[:1]
    for i, arg in enumerate(argv[1:], start=1):
        if arg == "--":  # what follows is no flag
            return out + argv[i:]
        flag, eq, value = arg.partition("=")
        if flag.startswith("--") and flag not in known:
            body = flag[2:]
            other = "--" + (body.replace("_", "-") if "_" in body else body.replace("-", "_"))
            flag = other if other in known else flag
        out.append(flag + eq + value)
    return out
