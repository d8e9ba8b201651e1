"""The pretraining key's rule: which settings name a run, so that adding one renames nothing.

A run's key hashes its ``weights`` and ``resume`` settings (`zoo.train.roles`). The rule:

- A setting joins the key only where its value differs from its baseline: the value it had
  when it was added, which is the behaviour before it existed. A new setting at its default
  changes no key, so every committed run and every user's cached run is still found.
- The baseline is pinned here (`BASELINE`, `LOSS_BASELINE`) at the setting's first default
  and never updated. A default changed later then keys exactly the runs that take the new one.
  A setting not pinned here falls back to its default now (a test asks for the pin).
- The settings keyed before this rule (`KEYED_ALWAYS`, `LOSS_KEYED_ALWAYS`) stay keyed at
  every value, as they were, so no committed key moved when the rule began.
- A plugin objective's own loss options are keyed at every value: the plugin file's contents
  key its runs' cells anyway (`harness.run.cells.plugin_digests`).
- Without ``bf16`` no autocast runs, so every score product is fp32 whatever
  ``loss.score_dtype`` says: the key leaves that option out there.

Cells follow the same rule for their task params (`harness.tasks.keyed_defaults`): params as
the suite writes them, plus each unwritten one whose default moved from its pin.

    key_fields(cfg)   # {'objective': 'cwt', 'loss': {...}, 'preset': 'bert-tiny', ...}
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zoo.objectives.declared import BUILT_IN_DEFAULTS, LossOptions
from zoo.train.roles import names_with_role

# the weights and resume settings keyed before the rule: keyed at every value, as they were
KEYED_ALWAYS = frozenset(
    {
        "allow_smaller_vocab", "attention", "batch_size", "betas", "bf16", "corpus", "eps",
        "fast_dropout", "flush_denormal", "freeze_body", "grad_clip", "init_from", "loss",
        "lr", "max_documents", "max_flops", "max_nonfinite_skips", "max_seconds", "max_tokens",
        "micro_batch_size", "micro_tokens", "min_lr_ratio", "mlm_probability", "objective",
        "preset", "prune_last_layer", "schedule", "seed", "seq_len", "sparse_embeddings",
        "steps", "tokenizer", "untie_head", "validation", "validation_fraction", "vocab_size",
        "warmup_steps", "weight_decay",
    }
)  # fmt: skip
# the built-in loss options keyed before the rule (`score_dtype` under bf16 only)
LOSS_KEYED_ALWAYS = frozenset(
    {"temperature", "duplicates", "cwt_impl", "ce_impl", "chunk", "negatives", "score_dtype"}
)
# setting added since -> its first default as JSON: keyed only where a run's value differs
BASELINE: dict[str, Any] = {}
# built-in loss option added since -> its first default as JSON
LOSS_BASELINE: dict[str, Any] = {}


def _baseline(cls: type[Any], name: str, pinned: dict[str, Any]) -> Any:
    """The pinned first default of setting `name`, else its default now (as JSON)."""
    if name in pinned:
        return pinned[name]
    field = cls.model_fields[name]
    return None if field.is_required() else field.get_default(call_default_factory=True)


def _kept(
    values: dict[str, Any], cls: type[Any], always: frozenset[str], pinned: dict[str, Any]
) -> dict[str, Any]:
    """`values` less those at their baseline, unless keyed always."""
    return {
        k: v
        for k, v in values.items()
        if k in always or k not in cls.model_fields or v != _json(_baseline(cls, k, pinned))
    }


def _json(value: Any) -> Any:
    """A default as the key's JSON values see it (tuples as lists, models as dicts)."""
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    return list(value) if isinstance(value, tuple) else value


def key_fields(cfg: BaseModel) -> dict[str, Any]:
    """The settings that make `cfg`'s pretraining key (a `PretrainConfig`), as JSON values,
    by the rule above."""
    config_cls = type(cfg)
    keyed = cfg.model_dump(
        mode="json", include=set(names_with_role(config_cls, "weights", "resume"))
    )
    keyed = _kept(keyed, config_cls, KEYED_ALWAYS, BASELINE)
    if "loss" in keyed:
        loss = keyed["loss"]
        if not keyed["bf16"]:  # keyed always
            loss = {k: v for k, v in loss.items() if k != "score_dtype"}
        own = {k: v for k, v in loss.items() if k not in LossOptions.model_fields}
        # every built-in option, at its default where the objective lacks it: the keys of the
        # runs made when every objective's options carried them all
        built_in = {**BUILT_IN_DEFAULTS, **{k: v for k, v in loss.items() if k not in own}}
        if not keyed["bf16"]:
            built_in.pop("score_dtype")
        keyed["loss"] = {**_kept(built_in, LossOptions, LOSS_KEYED_ALWAYS, LOSS_BASELINE), **own}
    return keyed
