"""`hlm bench`: speed and memory of the loss kernels and training steps, side by side in one
run, against the project's goals (docs/PERFORMANCE.md), naming the machine.

    hlm bench --quick
    hlm bench --only cli            # how long each `hlm VERB --help` takes
    hlm bench --device cuda         # the GPU comparisons, the step MFU goal first
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Speed and memory of the CWT kernels (plain, chunked, recompute, torch), the "
        "duplicate modes, and whole training steps (hf-default, fair vanilla, headless, sparse "
        "embeddings, bf16), with ratios measured in the same run against the project's goals "
        "(docs/PERFORMANCE.md) and an fp32 matmul roofline measured in the same run."
    )
    p.add_argument("--quick", action="store_true", help="smaller shapes: a few minutes")
    p.add_argument(
        "--json", action="store_true", help="rows as JSON: name, value, unit, target, status"
    )
    p.add_argument(
        "--only",
        nargs="+",
        choices=["cwt", "steps", "bf16", "compile", "corpus", "cli", "mfu"],
        help="run only these parts (not in the default run: bf16, the ladder's models' steps "
        "in fp32 and under bf16 autocast, side by side; compile, eager vs torch.compile "
        "steps; corpus, tokenisation speed, cache size and pretraining memory as the corpus "
        "grows 20x; cli, how long `hlm VERB --help` takes; mfu, with --device cuda only, the "
        "headless bert-base step at 256 x 128 tokens eager, compiled and as CUDA graphs, "
        "against the MFU goal of 0.40, which `steps` also runs after its table)",
    )
    p.add_argument(
        "--profile", action="store_true", help="print a torch.profiler table of a headless step"
    )
    p.add_argument("--strict", action="store_true", help="exit 1 if any target FAILs")
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="cpu (default): the goals of docs/PERFORMANCE.md, fp32; cuda: the same comparisons "
        "on a GPU under bf16 autocast, with cut-cross-entropy / Liger kernels where installed "
        "(INFO rows)",
    )


def run(args: argparse.Namespace) -> int:
    from benchmarks import format_rows, profile_headless_step, run_bench, run_cuda_bench
    from harness.cli.verbs import VERBS
    from zoo.errors import UserError

    if args.profile:
        print(profile_headless_step())
        return 0
    parts = tuple(args.only) if args.only else ("cwt", "steps")
    if args.device == "cuda" and not args.only and not args.quick:
        parts = ("mfu", *parts)  # the goal's steps first: a short GPU lease measures them
    if "mfu" in parts and args.device != "cuda":
        raise UserError("--only mfu: the step MFU goal is a GPU one; add --device cuda")
    if "bf16" in parts and args.device == "cuda":
        raise UserError(
            "--only bf16: a CPU comparison (a GPU runs bf16 in every cuda row); drop --device cuda"
        )
    if args.device == "cuda":
        rows = run_cuda_bench(quick=args.quick, parts=parts)
    else:
        rows = run_bench(quick=args.quick, parts=parts, verbs=list(VERBS))
    print(format_rows(rows, args.json))
    return 1 if any(r.status == "FAIL" for r in rows) and args.strict else 0
