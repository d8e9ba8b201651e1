"""The data section of a run config: corpus, validation text, sequences, masking and
batches."""

from __future__ import annotations

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
)

from zoo.data.corpus import source_problem
from zoo.settings import Settings
from zoo.train.limits import MAX_POSITIONS, MAX_SEQUENCES
from zoo.train.roles import role
from zoo.train.sections.model import refuse_for_decoders


class DataSettings(Settings):
    """The data: corpus, validation text, sequences, masking and batches."""

    corpus: list[str] = Field(
        default_factory=lambda: ["synthetic"],
        min_length=1,
        description="corpus sources: synthetic[:N], hub:NAME[:CONFIG][@SPLIT][#REVISION], or local "
        "files, folders and globs (tried under . and $HLM_DATA_ROOT)",
        json_schema_extra=role("weights"),
    )
    validation: list[str] | None = Field(
        None,
        min_length=1,
        description="validation sources; unset: hold out validation_fraction of the corpus",
        json_schema_extra=role("weights"),
    )
    validation_fraction: float = Field(
        0.02,
        gt=0,
        lt=1,
        description="share of documents held out for validation",
        json_schema_extra=role("weights"),
    )
    max_documents: int | None = Field(
        None,
        gt=0,
        description="use only the first N documents (quick runs)",
        json_schema_extra=role("weights"),
    )
    seq_len: int | None = Field(
        None,
        gt=0,
        le=MAX_POSITIONS,
        description="tokens per sequence, at most the preset's positions; unset: the preset's",
        json_schema_extra=role("weights"),
    )
    mlm_probability: float = Field(
        0.15,
        ge=0.01,
        le=0.9,
        description="encoders: share of masked tokens (0.01 to 0.9; the paper uses 0.15-0.4)",
        json_schema_extra=role("weights"),
    )
    batch_size: int | None = Field(
        None,
        gt=0,
        le=MAX_SEQUENCES,
        description="global batch: sequences per optimizer step, all processes and "
        "micro-batches together (the paper's batch size); unset: the preset's",
        json_schema_extra=role("weights"),
    )
    micro_batch_size: int | None = Field(
        None,
        gt=0,
        le=MAX_SEQUENCES,
        description="sequences per forward pass in each process; unset: the largest that "
        "divides the process's share of the batch within micro_tokens",
        json_schema_extra=role("resume"),
    )
    micro_tokens: int = Field(
        16384,
        gt=0,
        description="most tokens per forward pass when micro_batch_size is unset",
        json_schema_extra=role("resume"),
    )
    seed: int = Field(
        0,
        ge=0,
        le=2**32 - 1,
        description="seed of initialisation, batches and dropout",
        json_schema_extra=role("weights", recipe=False),
    )

    @field_validator("seq_len")
    @classmethod
    def _seq_len_fits_positions(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and "preset" in info.data:
            from zoo.models import PRESETS  # the model families import torch: only when checked

            positions = PRESETS.get(info.data["preset"])().max_positions
            if v > positions:
                raise ValueError(
                    f"{v} is longer than the {info.data['preset']} positions ({positions})"
                )
        return v

    @field_validator("mlm_probability")
    @classmethod
    def _encoders_mask(cls, v: float, info: ValidationInfo) -> float:
        if v != cls.model_fields["mlm_probability"].default:
            refuse_for_decoders(info, "it predicts every next token")
        return v

    @field_validator("validation_fraction")
    @classmethod
    def _held_out_of_the_corpus(cls, v: float, info: ValidationInfo) -> float:
        given = info.data.get("validation")
        if given and v != cls.model_fields["validation_fraction"].default:
            raise ValueError(
                f"applies where validation is unset; the validation sources given "
                f"({', '.join(given)}) are the validation text: leave it unset"
            )
        return v

    @field_validator("corpus", "validation")
    @classmethod
    def _sources_exist(cls, v: list[str] | None) -> list[str] | None:
        for i, source in enumerate(v or []):
            problem = source_problem(source)
            if problem is not None:
                raise ValueError(f"[{i}] {problem}")
        return v
