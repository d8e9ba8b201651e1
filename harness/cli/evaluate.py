"""`hlm evaluate`: lm-eval on one checkpoint, with lm_eval's own flags, meanings and results file
(`harness.run.evaluate`).

    hlm evaluate runs/x/final --tasks hlm_lambada,hlm_boolq --limit 100
    hlm evaluate --model hf --model_args pretrained=runs/x/final,dtype=float32 \\
        --tasks hlm_lambada --output_path out --log_samples        # an lm_eval command line
    hlm evaluate runs/x/final --tasks hlm_boolq --leaderboard adhoc   # also keep the rows

lm-eval's generation, chat, metadata, caching and output flags, and `--model_args revision=`
and `max_length=`, have lm-eval's meanings; its few other flags and keys are refused, each
with the reason (`harness.cli.lm_eval_flags`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.cli.flags import add_leaderboards, int_at_least
from harness.cli.lm_eval_flags import (
    LM_EVAL_SEEDS,
    REFUSED_MODEL_ARGS,
    add_refused,
    dict_arg,
    lm_eval_flag,
    lm_eval_seeds,
    merged,
    refused,
)
from harness.cli.parsing import verbosity

if TYPE_CHECKING:
    from harness.run.evaluate import EvaluateRequest

MAX_FEWSHOT = 1000  # past any task's examples: lm-eval fails deep inside past its own


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run lm-eval 0.4 tasks on a decoder checkpoint and print lm-eval's table. It takes "
        "lm_eval's own flags with their meanings (`lm_eval --model hf --model_args "
        "pretrained=CKPT --tasks hlm_lambada --output_path out` works as `hlm evaluate ...`, "
        "and --output_path writes lm-eval's own results file). The shipped offline tasks "
        "(hlm_lambada, hlm_boolq, hlm_crows_pairs_english, hlm_pubmedqa) read $HLM_DATA_ROOT; "
        "--include_path adds your task folders. With --leaderboard NAME the rows are also "
        "added to leaderboards/NAME/."
    )
    p.add_argument(
        "checkpoint",
        nargs="?",
        help="a checkpoint folder, run name (`hlm runs`) or hub id (or --model_args pretrained=)",
    )
    lm_eval_flag(
        p,
        "tasks",
        "-t",
        nargs="+",
        required=True,
        help="lm-eval task names, comma- or space-separated",
    )
    lm_eval_flag(
        p, "model", "-M", default="hf", help="lm-eval's model type: hf (the one hlm evaluates)"
    )
    lm_eval_flag(
        p,
        "model_args",
        "-a",
        nargs="+",
        default=[],
        help="key=val,key2=val2 as lm-eval's: pretrained (the checkpoint), dtype, device",
    )
    lm_eval_flag(p, "limit", "-L", help="examples per task, or a fraction of them below 1")
    lm_eval_flag(
        p,
        "num_fewshot",
        "-f",
        type=int_at_least(0, MAX_FEWSHOT),
        help=f"few-shot examples (default: 0; at most {MAX_FEWSHOT})",
    )
    lm_eval_flag(
        p,
        "batch_size",
        "-b",
        default="1",
        help="an integer, auto or auto:N, each from 1 to 65536 (default: 1, as lm_eval's)",
    )
    lm_eval_flag(
        p,
        "include_path",
        nargs="+",
        default=[],
        help="folders of your task YAMLs; their !function hooks run Python, as with lm_eval: "
        "name only folders you trust",
    )
    lm_eval_flag(
        p, "output_path", "-o", help="lm-eval's results file (and samples): a folder or a .json"
    )
    lm_eval_flag(
        p, "log_samples", "-s", action="store_true", help="also write lm-eval's per-sample log"
    )
    lm_eval_flag(p, "device", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    _add_generation(p)
    p.add_argument("--dtype", help="auto, float32, bfloat16 or float16 (default: auto)")
    lm_eval_flag(
        p,
        "seed",
        type=lm_eval_seeds,
        default=lm_eval_seeds(LM_EVAL_SEEDS),
        help="lm-eval's seeds for python random, numpy, torch and few-shot sampling: one "
        f"integer for all four, or 4 comma-separated, None leaving one unset (default: "
        f"{LM_EVAL_SEEDS}, as lm_eval's); the first is the row's seed",
    )
    p.add_argument(
        "--label", help="the model's label in the leaderboard (default: the run's folder name)"
    )
    p.add_argument("--leaderboard", help="also add the rows to leaderboards/NAME/")
    add_leaderboards(p)
    add_refused(p)  # lm_eval run's other flags: each refused with why


def _add_generation(p: argparse.ArgumentParser) -> None:
    """lm-eval's prompt, generation, caching and output flags, with its meanings."""
    lm_eval_flag(
        p,
        "gen_kwargs",
        nargs="+",
        type=dict_arg("--gen_kwargs"),
        help="generation settings over each task's own: key=val tokens (values read as Python "
        "literals) or a JSON object, as lm_eval's; part of the row's key",
    )
    lm_eval_flag(
        p,
        "apply_chat_template",
        nargs="?",
        const=True,
        default=False,
        help="format prompts with the tokenizer's chat template (or the one named); a zoo "
        "checkpoint has none unless you add one",
    )
    lm_eval_flag(
        p,
        "fewshot_as_multiturn",
        type=_true_or_false,
        help="few-shot examples as turns of a chat: true or false (default: with a template)",
    )
    lm_eval_flag(p, "system_instruction", help="a system instruction before each prompt")
    lm_eval_flag(
        p, "use_cache", "-c", help="an SQLite file of model responses, as lm_eval's (not keyed)"
    )
    lm_eval_flag(
        p, "write_out", "-w", action="store_true", help="print the first documents' prompts"
    )
    lm_eval_flag(
        p,
        "predict_only",
        "-x",
        action="store_true",
        help="keep the model's outputs, compute no metric (needs --output_path; no rows)",
    )
    lm_eval_flag(
        p,
        "metadata",
        nargs="+",
        type=dict_arg("--metadata"),
        help="key=val tokens or a JSON object merged with the model args, as lm_eval's (RULER's "
        "max_seq_lengths); part of the row's key",
    )


def _true_or_false(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"{text!r}: true or false")
    return text.lower() == "true"


# lm-eval's model_args hlm evaluate takes
MODEL_ARGS = ("pretrained", "dtype", "device", "revision", "max_length")


def model_args(given: list[str]) -> dict[str, str]:
    """lm-eval's `--model_args` (`k=v,k2=v2` or `k=v k2=v2`) as a dict, each key checked."""
    from harness.suite import SuiteError

    out: dict[str, str] = {}
    for token in (t for arg in given for t in arg.split(",") if t):
        key, sep, value = token.partition("=")
        if not sep or not key or not value.strip():
            raise SuiteError([f"--model_args: {token!r} is not key=value (a value not empty)"])
        if key in out:
            raise SuiteError([f"--model_args: {key!r} given twice ({out[key]!r}, {value!r})"])
        if key in REFUSED_MODEL_ARGS:
            raise SuiteError([f"--model_args: {key!r}: hlm evaluate does not take it: "
                              f"{REFUSED_MODEL_ARGS[key]}"])  # fmt: skip
        if key not in MODEL_ARGS:
            raise SuiteError(
                [
                    f"--model_args: {key!r} is not taken by hlm evaluate (it takes "
                    f"{', '.join(MODEL_ARGS)})"
                ]
            )
        out[key] = value
    return out


def request(args: argparse.Namespace) -> EvaluateRequest:
    """The command line as `harness.run.evaluate` takes it; a refused flag or `--model_args`
    key is an error that says why."""
    from harness.run.evaluate import EvaluateRequest
    from harness.suite import SuiteError

    if problems := refused(args):
        raise SuiteError(problems)
    if args.predict_only and not args.output_path:
        raise SuiteError(["--predict_only: give --output_path, where lm-eval writes the outputs"])
    if args.predict_only and args.leaderboard:
        raise SuiteError(["--predict_only computes no metric: there are no rows for --leaderboard"])
    return EvaluateRequest(
        checkpoint=args.checkpoint,
        tasks=args.tasks,
        model=args.model,
        model_args=model_args(args.model_args),
        limit=args.limit,
        num_fewshot=args.num_fewshot,
        batch_size=args.batch_size,
        include_path=args.include_path,
        output_path=args.output_path,
        log_samples=args.log_samples or args.predict_only,  # as lm_eval's
        device=args.device,
        lm_eval_settings={
            "gen_kwargs": merged(args.gen_kwargs),
            "apply_chat_template": args.apply_chat_template or None,  # None: not given
            "fewshot_as_multiturn": args.fewshot_as_multiturn,
            "system_instruction": args.system_instruction,
            "use_cache": args.use_cache,
            "write_out": args.write_out or None,
            "predict_only": args.predict_only or None,
            "metadata": merged(args.metadata),
        },
        dtype=args.dtype,
        seed=args.seed,
        label=args.label,
        leaderboard=args.leaderboard,
        progress=verbosity(args) >= 0,
    )


def run(args: argparse.Namespace) -> int:
    import tempfile
    import time
    from pathlib import Path

    from lm_eval.utils import make_table

    from harness.run.evaluate import adhoc_suite, evaluate_into, results_written
    from zoo.errors import UserError

    name = args.leaderboard or "evaluate"
    suite = adhoc_suite(request(args), name)  # the name is checked as a suite's: a safe name
    began = time.time() - 1
    with tempfile.TemporaryDirectory(prefix="hlm-evaluate-") as tmp:
        out = Path(args.leaderboards) / name if args.leaderboard else Path(tmp) / name
        results = evaluate_into(suite, out)
        for r in results:
            print(make_table(r))
        if args.output_path:
            written = results_written(suite.tasks[0].params["output_path"], began)
            if not written:
                raise UserError(f"--output_path {args.output_path}: lm-eval wrote no results there")
            for f in written:
                print(f"lm-eval's results: {f}")
    if args.limit is not None:
        print(f"partial: --limit {args.limit} scored part of each task's examples (the rows "
              "say so: `hlm leaderboard` names them)")  # fmt: skip
    if args.leaderboard:
        print(f"rows added to {out} (hlm leaderboard {name})")
    return 0
