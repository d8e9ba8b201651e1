"""Checkpoint metadata: `hlm_metadata.json`, one typed model with a schema version.

Every checkpoint folder written by pretraining or causal fine-tuning holds it. It says what
the weights are (kind, family, preset, vocabulary, tokenizer), how they were made (the
*pretraining* objective and its loss options, recipe, corpus, seed, world size; a causal
fine-tuning is recorded beside the objective, never in its place) and how much they cost
(steps, tokens, FLOPs, seconds), with the library versions. Readers get a `CheckpointMetadata`
or a clear error naming the file; nothing reads it as a loose dict.
"""

from __future__ import annotations

import json
import platform
import re
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from zoo.errors import UserError, format_validation_error
from zoo.models.spec import Kind
from zoo.objectives import OBJECTIVES, ObjectiveOptions
from zoo.reader import read_json
from zoo.text import control_in, visible
from zoo.train.recipe import ResolvedRecipe
from zoo.writer import write_text

METADATA = "hlm_metadata.json"
SCHEMA_VERSION = 1


class TokenizerInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="'trained' (on the corpus) or the folder / hub id it came from")
    vocab_size: int = Field(description="the tokenizer's real number of entries")
    added_specials: list[str] = Field(
        default_factory=list,
        description="special tokens added to a given tokenizer for this model (an encoder's "
        "[PAD], [CLS], [SEP], [MASK] on a GPT-2 tokenizer)",
    )


class CausalFinetune(BaseModel):
    """The causal fine-tuning a headless decoder received on top of its pretraining."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    from_checkpoint: str
    from_step: int = Field(description="the pretraining step of the checkpoint it started from")
    steps: int
    lr: float
    warmup_steps: int
    batch_size: int
    tokens: int
    probe: bool = False


class ResumeRecord(BaseModel):
    """Settings a `--resume` changed, with the step it resumed from: {setting: [before, now]}."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step: int
    changed: dict[str, list[Any]]


class CheckpointMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = SCHEMA_VERSION
    kind: Kind
    family: str
    preset: str
    objective: str = Field(description="the pretraining objective (kept after fine-tuning)")
    objective_source: str = Field(
        "",
        description="where the objective's code came from (`zoo.registry.defined_in`): hlm's "
        "version, a plugin file's name and hash, or a package and its version",
    )
    headless: bool
    loss: dict[str, Any] = Field(description="the objective's loss options as trained")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="the run config's settings that shaped these weights, as given (its "
        "pretraining-key fields, loss options included); empty in older checkpoints",
    )
    causal_finetune: CausalFinetune | None = None
    pretrain_key: str | None = None
    tokenizer: TokenizerInfo
    vocab_size: int = Field(description="rows of the model's embedding matrix")
    world_size: int
    strategy: Literal["single", "ddp", "fsdp"] = Field(
        "single", description="how the processes held the model: one process, DDP or FSDP"
    )
    device: str
    hardware: str = Field(
        "",
        description="the processor it was trained on: the GPU's name (cuda) or the CPU's model "
        "(`zoo.hardware`); empty in checkpoints written before it was recorded",
    )
    seq_len: int
    batch_size: int = Field(description="sequences per optimizer step, all processes")
    negatives: int = Field(
        description="contrastive negatives per forward pass: K selected positions, times the "
        "world size with global negatives"
    )
    recipe: ResolvedRecipe
    corpus: list[str]
    corpus_contents: str | None = Field(
        None,
        description="digest of the training and validation text's contents when it was trained "
        "(files' checksums, the Hub revision); None where unknown (a Hub revision offline, a "
        "checkpoint written before it was recorded)",
    )
    seed: int
    params: int
    init_from: str | None = None
    steps: int = Field(description="optimizer steps of the run that wrote this checkpoint")
    tokens_seen: int = Field(description="training tokens so far, fine-tuning included")
    train_flops: float
    wall_seconds: float
    stopped_by: str | None = Field(
        None, description="the budget that ended the run (steps, tokens, flops, seconds)"
    )
    skipped_steps: int = Field(0, description="updates skipped for non-finite loss or gradients")
    resumed: list[ResumeRecord] = Field(
        default_factory=list, description="each resume that changed settings, and what it changed"
    )
    reached: list[str] = Field(
        default_factory=list,
        description="the budget marks (save_at) first reached at this checkpoint: tokens=T...",
    )
    validation: dict[str, float] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _one_line_strings(cls, data: Any) -> Any:
        """Every name a checkpoint carries is one line of printable text: a newline or an
        escape in one would break out of a card's table row or rewrite a terminal."""
        found = control_in(data)
        if found is not None:
            raise ValueError(f"{found[0]}: {visible(found[1])[:80]!r} holds a control character")
        return data

    @property
    def pretrain_step(self) -> int:
        """The pretraining step these weights come from (a fine-tuning's starting step)."""
        return self.causal_finetune.from_step if self.causal_finetune is not None else self.steps

    def loss_options(self) -> ObjectiveOptions:
        """The loss options, as the objective's own options model (its plugin must be loaded)."""
        return OBJECTIVES.get(self.objective).read_options(self.loss)


def versions() -> dict[str, str]:
    """Versions of the libraries a result depends on (lm-eval's where installed)."""
    out = {"python": platform.python_version()}
    for dist in ("headless-zoo", "torch", "transformers", "tokenizers", "lm_eval"):
        try:
            out[dist] = importlib_metadata.version(dist)
        except importlib_metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def write_metadata(folder: Path, meta: CheckpointMetadata) -> None:
    data = meta.model_copy(update={"versions": versions()}).model_dump(mode="json")
    write_text(folder / METADATA, json.dumps(data, indent=2, allow_nan=False))


def read_metadata(folder: str | Path) -> CheckpointMetadata:
    """The metadata of a checkpoint folder, or a UserError naming the file and the problem."""
    f = Path(folder) / METADATA
    if not f.is_file():
        raise UserError(
            f"{f}: not found: {folder} is not a headless-zoo checkpoint (written by hlm pretrain "
            "or hlm finetune-causal)"
        )
    data = read_json(f, "checkpoint metadata")
    if not isinstance(data, dict) or "schema_version" not in data:
        raise UserError(f"{f}: no schema_version: written by an older or foreign tool")
    if data["schema_version"] != SCHEMA_VERSION:
        raise UserError(
            f"{f}: schema_version {data['schema_version']!r} is unknown (this headless-zoo reads "
            f"{SCHEMA_VERSION})"
        )
    try:
        return CheckpointMetadata.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, str(f))) from None


HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")  # owner/name, as the Hub names repositories


def find_metadata(folder: str | Path) -> CheckpointMetadata | None:
    """The metadata where the folder has it, or for a Hub id the file its repository holds
    (a published headless-zoo checkpoint, downloaded or in the local cache); None for a
    foreign checkpoint (a plain HF folder or repository). A metadata file that is present but
    unreadable is an error, never None."""
    if (Path(folder) / METADATA).is_file():
        return read_metadata(folder)
    if Path(folder).exists() or not HUB_ID.match(str(folder)):
        return None
    from huggingface_hub import hf_hub_download

    try:
        local = hf_hub_download(str(folder), METADATA)
    except Exception:  # not a headless-zoo repository, or offline without it cached
        return None
    return read_metadata(Path(local).parent)
