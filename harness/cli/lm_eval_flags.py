"""lm-eval's dialect for `hlm evaluate`: its flags under lm-eval's names and meanings, its
`--seed` forms, and each of its other flags refused with the reason.

    lm_eval_flag(p, "num_fewshot", "-f")     # --num_fewshot, --num-fewshot and -f
    lm_eval_seeds("0,1234,1234,1234")        # random, numpy, torch, few-shot
    add_refused(p)                           # lm_eval run's flags it does not take: why said
"""

from __future__ import annotations

import argparse
from typing import Any


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


# lm_eval run's flags `hlm evaluate` does not take -> why
REFUSED_FLAGS: dict[str, str] = {
    "cache_requests": "hlm builds each task's requests afresh, so an edited task is never stale",
    "check_integrity": "it runs lm-eval's own task tests: run them with lm_eval",
    "show_config": "--output_path writes lm-eval's results file, its config block included",
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
    "config": "hlm evaluate reads its arguments from the command line; a suite is its file",
}

# --model_args keys `hlm evaluate` does not take -> why
REFUSED_MODEL_ARGS: dict[str, str] = {
    "trust_remote_code": REFUSED_FLAGS["trust_remote_code"],
    "add_bos_token": "the checkpoint's tokenizer decides, as it did in pretraining",
    "parallelize": "hlm evaluate runs one device (--device)",
}


def dict_arg(flag: str) -> Any:
    """An argparse type reading one of lm-eval's `key=val` tokens (values by
    `ast.literal_eval`) or a JSON object, as its `--gen_kwargs` and `--metadata` read them
    (with its own parsers); the tokens of a flag are merged by `merged`."""

    def read(value: str) -> dict[str, Any]:
        from lm_eval._cli.utils import key_val_to_dict, try_parse_json

        parsed = try_parse_json(value)
        if isinstance(parsed, dict):
            return dict(parsed)
        try:
            return dict(key_val_to_dict(value))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{flag}: {exc}") from None

    return read


def merged(parts: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """A flag's `dict_arg` tokens as one dict (later keys win, as lm-eval's), None if none."""
    if not parts:
        return None
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return out


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
