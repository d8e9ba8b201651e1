"""The verbs of `hlm`, in the order `hlm --help` lists them: each a module of this package that
holds its flags (`add_arguments`) and its command (`run`).

    VERBS["plot"]           # its one-line help
    verb_module("plot")     # harness.cli.plot, imported now

A verb module imports argparse and this package's flag helpers only at its top, and what its
command uses inside `run`, so `hlm --help` and `hlm VERB --help` answer without loading torch,
transformers or pandas. Adding a verb: one module with `add_arguments` and `run`, and its line
here. A verb module may also hold `preload(argv)`, run before its flags are made (files typed
on the line that add flags), and `FALSE_FRIENDS`, its hints for other tools' flag names.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# verb: one-line help; the module is harness.cli.<verb, dashes as underscores>
VERBS: dict[str, str] = {
    "ls": "list objectives, presets, loss kernels and task types",
    "pretrain": "pretrain a model (flags and/or a YAML config)",
    "finetune-causal": "causal fine-tuning of a headless decoder (new LM head from the embeddings)",
    "validate": "check suite YAML files without computing anything",
    "run": "run a suite: pretrain what is missing, evaluate, write the leaderboard",
    "runs": "the cached pretraining runs by name (suite/model/seed-N), with their state",
    "leaderboard": "print a suite's leaderboard (seeds aggregated, models x metrics)",
    "publish": "upload a checkpoint (model card) or a leaderboard (dataset card) to the Hub",
    "bench": "measure loss kernels and training steps side by side, against targets",
    "plot": "write PNG figures of a suite's leaderboard",
    "evaluate": "lm-eval tasks on one checkpoint, with lm_eval's flags and results file",
    "report": "write one static HTML page of a leaderboard (tables, figures, provenance)",
    "power": "the power of a leaderboard's seeds: detectable Δ, seeds needed for an effect",
}


def verb_module(verb: str) -> ModuleType:
    """The module of `verb` (its `add_arguments` and `run`)."""
    return importlib.import_module(f"harness.cli.{verb.replace('-', '_')}")
