"""`hlm ls`: what is registered, each with where it comes from.

hlm ls                          objectives, presets, loss kernels, task types
hlm ls --plugins my_loss.py     with the objectives a plugin file registers
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plugins", nargs="+", help="Python files that register objectives / tasks")


def run(args: argparse.Namespace) -> int:
    from zoo.registry import load_plugin

    for plugin in args.plugins or []:  # typed by the user: their choice
        load_plugin(plugin, trusted=True)
    _objectives()
    _presets()
    _kernels()
    from harness.tasks import TASKS  # a task file that fails to import is an error, not a gap

    print("task types:")
    for name, task in TASKS.items():
        print(f"  {name:14s} {task.description}")
    return 0


def _objectives() -> None:
    from zoo.objectives import OBJECTIVES
    from zoo.registry import defined_in

    print("objectives:")
    width = max(len(name) for name, _ in OBJECTIVES.items())
    for name, obj in OBJECTIVES.items():
        tag = "headless" if obj.headless else "vocab head"
        reads = ", ".join(sorted(obj.options.model_fields))
        source = defined_in(obj.loss)
        where = "" if source.startswith("hlm ") else f"; from {source}"
        print(f"  {name:{width}s}  {'[' + tag + ']':12s} {obj.description} (loss: {reads}{where})")


def _presets() -> None:
    from zoo.models import PRESETS

    print("presets:")
    for name, builder in PRESETS.items():
        spec = builder()
        print(
            f"  {name:24s} {spec.kind:8s} L{spec.num_layers} H{spec.hidden_size} A{spec.num_heads} "
            f"V{spec.vocab_size} (family {spec.family})"
        )


def _kernels() -> None:
    from zoo.objectives.kernels import KERNELS

    print("loss kernels (loss.ce_impl / loss.cwt_impl, beside plain):")
    for name, kernel in KERNELS.items():
        where = f"CUDA, pip install {kernel.vendor.package}" if kernel.vendor else "any device"
        print(f"  {name:10s} [{where}] {kernel.description}")
