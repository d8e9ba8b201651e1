"""`hlm finetune-causal`: a headless decoder regains generation (paper section 3.3).

    hlm finetune-causal runs/x/final runs/x-lm --steps 2000

An LM head initialised from the input embeddings (an NCE model's: from its target-embedding
matrix), trained with causal cross-entropy (`zoo.train.causal_finetune.finetune_causal`).
Its flags are the fine-tuning settings' fields (`harness.cli.config_flags`).
"""

from __future__ import annotations

import argparse

from harness.cli.config_flags import add_config_flags
from harness.cli.parsing import verbosity


def add_arguments(p: argparse.ArgumentParser) -> None:
    from zoo.train.finetune_settings import CausalFinetuneConfig

    p.description = (
        "Give a headless decoder an LM head initialised from its input embeddings (an NCE "
        "model's: from its target-embedding matrix) and train it with causal cross-entropy "
        "(paper section 3.3). Output loads with AutoModelForCausalLM."
    )
    p.add_argument(
        "checkpoint",
        help="a headless decoder: its checkpoint folder, or its run's name (`hlm runs`)",
    )
    p.add_argument("output_dir", help="where to write the fine-tuned run")
    add_config_flags(p, CausalFinetuneConfig, skip=set())


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from zoo.errors import UserError, format_validation_error
    from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
    from zoo.train.names import resolve_checkpoint

    values = {k: getattr(args, k) for k in CausalFinetuneConfig.model_fields}
    if verbosity(args) < 0:
        values["progress"] = False
    try:
        settings = CausalFinetuneConfig.model_validate(
            {k: v for k, v in values.items() if v is not None}
        )
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, "command line")) from None
    final = finetune_causal(resolve_checkpoint(args.checkpoint), args.output_dir, settings)
    print(f"checkpoint: {final}")
    return 0
