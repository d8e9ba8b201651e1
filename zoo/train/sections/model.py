"""The objective and model sections of a run config (`zoo.train.config.PretrainConfig`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from zoo.errors import error_message, key_path
from zoo.objectives import OBJECTIVES, ObjectiveOptions
from zoo.settings import Settings
from zoo.train.limits import MAX_VOCAB
from zoo.train.roles import role

UNREAD_OPTION = "unread_option"  # the error type of a loss option the objective never reads


class ObjectiveSettings(Settings):
    """The objective: plugins that register it, its name and loss options, its embeddings'
    updates."""

    plugins: list[str] = Field(
        default_factory=list,
        description="Python files that register objectives (a file's own are imported only "
        "with --trust-plugins; relative paths are read from the config file's folder)",
        json_schema_extra=role("runtime", recipe=False),
    )
    objective: str = Field(
        "cwt",
        description="pretraining objective (hlm ls)",
        json_schema_extra=role("weights", recipe=False),
    )
    loss: SerializeAsAny[ObjectiveOptions] = Field(
        default_factory=ObjectiveOptions,
        validate_default=True,
        description="the objective's loss options (its own options model)",
        json_schema_extra=role("weights", recipe=False),
    )
    sparse_embeddings: bool = Field(
        False,
        description="sparse input-embedding gradients + SparseAdam (headless objectives): update "
        "cost proportional to the tokens in the batch, not to V",
        json_schema_extra=role("weights"),
    )

    @field_validator("plugins")
    @classmethod
    def _plugin_files(cls, v: list[str]) -> list[str]:
        """Each a Python file; imported by `zoo.train.config.load_config` once the rest of the
        config has validated, and only as `zoo.registry.load_plugin` allows."""
        for plugin in v:
            path = Path(plugin).expanduser()
            if not path.is_file() or path.suffix != ".py":
                raise ValueError(f"{plugin}: not a Python file (.py) that exists")
        return v

    @field_validator("objective")
    @classmethod
    def _known_objective(cls, v: str) -> str:
        if v not in OBJECTIVES:
            raise ValueError(OBJECTIVES.unknown_message(v))
        return v

    @field_validator("loss", mode="before")
    @classmethod
    def _objective_options(cls, v: Any, info: ValidationInfo) -> Any:
        """`loss:` as the objective's own options model (`Objective.read_options`): a key it
        lacks is refused (its own error type, so that a suite's check names where each was
        set), a value out of range named at its key."""
        name = info.data["objective"] if "objective" in info.data else None
        if name is None:
            return v
        objective = OBJECTIVES.get(name)
        if isinstance(v, ObjectiveOptions):  # the default, or a copy: keep only what was set
            v = v.model_dump(exclude_unset=True)
        if not isinstance(v, dict):
            return v  # refused by the field itself
        if lacked := objective.lacks(v):
            raise PydanticCustomError(
                UNREAD_OPTION, objective.lacks_message(lacked), {"names": lacked}
            )
        try:
            return objective.read_options(v)
        except ValidationError as exc:
            raise ValueError(
                "; ".join(
                    f"{key_path(tuple(e['loc']))}: {error_message(e, objective.options)}"
                    for e in exc.errors()
                )
            ) from None


def refuse_for_decoders(info: ValidationInfo, why: str) -> None:
    """Refuse an encoders-only setting, set away from its default, for a decoder
    preset, which never reads it: it would give the run another key and the same weights."""
    if "preset" not in info.data:
        return  # an unknown preset: reported by its own check
    from zoo.models import PRESETS  # the model families import torch: only when checked

    if not PRESETS.get(info.data["preset"])().is_encoder:
        raise ValueError(
            f"applies to encoders; {info.data['preset']} is a decoder ({why}): leave it unset"
        )


class ModelSettings(Settings):
    """The model: preset, vocabulary and tokenizer, initialisation, head and kernels."""

    preset: str = Field(
        description="model preset (hlm ls)", json_schema_extra=role("weights", recipe=False)
    )
    tokenizer: str | None = Field(
        None,
        description="tokenizer folder or hub id; unset: trained on the corpus",
        json_schema_extra=role("weights"),
    )
    vocab_size: int | None = Field(
        None,
        gt=0,
        le=MAX_VOCAB,
        description="vocabulary size; unset: the preset's",
        json_schema_extra=role("weights"),
    )
    allow_smaller_vocab: bool = Field(
        False,
        description="when the tokenizer trained on the corpus cannot reach vocab_size, train "
        "with the size it reached (with a warning) instead of stopping",
        json_schema_extra=role("weights"),
    )
    init_from: str | None = Field(
        None,
        description="start from this checkpoint instead of random init (of the preset's "
        "shape: the preset labels the run)",
        json_schema_extra=role("weights", recipe=False),
    )
    untie_head: bool = Field(
        False,
        description="give the init_from model a separate LM head initialised from the embeddings",
        json_schema_extra=role("weights"),
    )
    freeze_body: bool = Field(
        False,
        description="train only the LM head (a probe; needs untie_head)",
        json_schema_extra=role("weights"),
    )
    prune_last_layer: bool = Field(
        True,
        description="encoders: run the last layer's queries and feed-forward only at the masked "
        "positions, the only ones a loss reads (same values; ~17% fewer FLOPs for 4 layers)",
        json_schema_extra=role("weights"),
    )
    attention: Literal["sdpa", "xformers"] = Field(
        "sdpa",
        description="attention kernel: sdpa (torch's, everywhere) or xformers (CUDA, where "
        "installed; the paper trained with it)",
        json_schema_extra=role("resume"),
    )

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: str) -> str:
        from zoo.models import PRESETS  # the model families import torch: only when checked

        if v not in PRESETS:
            raise ValueError(PRESETS.unknown_message(v))
        return v

    @field_validator("init_from")
    @classmethod
    def _one_tokenizer(cls, v: str | None, info: ValidationInfo) -> str | None:
        given = info.data.get("tokenizer")
        if v is not None and given is not None:
            raise ValueError(
                f"the checkpoint brings its own tokenizer: leave tokenizer ({given}) unset"
            )
        return v

    @field_validator("allow_smaller_vocab")
    @classmethod
    def _a_tokenizer_trained_here(cls, v: bool, info: ValidationInfo) -> bool:
        given = info.data.get("tokenizer")
        if v and given is not None:
            raise ValueError(
                f"applies to a tokenizer trained on the corpus; the given one ({given}) "
                "decides the vocabulary: leave it unset"
            )
        return v

    @field_validator("init_from")
    @classmethod
    def _its_own_vocabulary(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and info.data.get("allow_smaller_vocab"):
            raise ValueError(
                "the checkpoint brings its own vocabulary: leave allow_smaller_vocab unset"
            )
        return v

    @field_validator("prune_last_layer")
    @classmethod
    def _encoders_prune(cls, v: bool, info: ValidationInfo) -> bool:
        if not v:
            refuse_for_decoders(info, "every position feeds its loss")
        return v

    @field_validator("untie_head")
    @classmethod
    def _untie_a_checkpoint(cls, v: bool, info: ValidationInfo) -> bool:
        if v and info.data.get("init_from") is None:
            raise ValueError(
                "gives the init_from checkpoint a head of its own: set init_from too "
                "(hlm finetune-causal does both)"
            )
        return v

    @field_validator("freeze_body")
    @classmethod
    def _probe_a_head_of_its_own(cls, v: bool, info: ValidationInfo) -> bool:
        if v and not info.data.get("untie_head"):
            raise ValueError(
                "trains only an LM head of its own: it needs untie_head (hlm finetune-causal "
                "--probe), or a tied head would train the input embeddings"
            )
        return v

    @field_validator("vocab_size")
    @classmethod
    def _vocab_fits_tokenizer(cls, v: int | None, info: ValidationInfo) -> int | None:
        if v is not None and info.data.get("tokenizer") is None and "preset" in info.data:
            from zoo.models import PRESETS
            from zoo.tokenizers import min_vocab_size

            kind = PRESETS.get(info.data["preset"])().kind
            if v < min_vocab_size(kind):
                raise ValueError(
                    f"{v} is too small for the {kind} tokenizer trained here: it must be >= "
                    f"{min_vocab_size(kind)} (its special tokens, alphabet and one more)"
                )
        return v
