"""The settings of a causal fine-tuning (`hlm finetune-causal`, a suite's `finetune:`), apart
from the fine-tuning itself so that reading them (the command's flags, `--help`) imports no torch.
"""

from __future__ import annotations

from pydantic import Field

from zoo.settings import Settings
from zoo.train.limits import MAX_POSITIONS, MAX_SEQUENCES, MAX_STEPS

# What a causal fine-tuning's checkpoint holds, in the ids of the cells that evaluate one and
# the name of its folder: a fix to it makes those computed anew. 2: the LM head it trained
# (1, before: a copy of the input embeddings, written over that head when saving).
FINETUNE_VERSION = 2


class CausalFinetuneConfig(Settings):
    """Section 4.2 and Table 15: 10000 steps (about 7% of Pythia's 143000) at a constant
    learning rate after a linear warm-up of 20% of them, a global batch a quarter of
    pretraining's (256 for 1024), plain cross-entropy, no weight decay.

    The learning rate is 1e-4, as section 4.2's text says; Table 15 prints 1e-5. We follow the
    text because it describes the run behind Figure 4, whose curves it discusses, while the
    table stands alone; a suite sets `finetune: {lr: 1.0e-5}` for the table's value. Unset
    batch size, sequence length and corpus derive from the pretraining (the checkpoint's
    metadata)."""

    steps: int = Field(1000, gt=0, le=MAX_STEPS, description="fine-tuning steps")
    lr: float = Field(1e-4, gt=0, description="constant learning rate after warm-up")
    warmup_steps: int | None = Field(
        None, ge=0, description="linear warm-up steps; unset: 20% of the steps (Table 15)"
    )
    batch_size: int | None = Field(
        None,
        gt=0,
        le=MAX_SEQUENCES,
        description="global batch; unset: a quarter of the pretraining batch",
    )
    seq_len: int | None = Field(
        None,
        gt=0,
        le=MAX_POSITIONS,
        description="sequence length, at most the model's positions; unset: the pretraining one",
    )
    corpus: list[str] | None = Field(
        None, min_length=1, description="corpus sources; unset: the pretraining corpus"
    )
    probe: bool = Field(False, description="train only the LM head (body frozen)")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="seed of batches and dropout")
    progress: bool = Field(True, description="progress bar")
    overwrite: bool = Field(
        False,
        description="clear an output folder that holds a run already and start anew (without "
        "it, such a folder is refused)",
    )
