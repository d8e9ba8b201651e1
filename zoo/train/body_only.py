"""Body-only checkpoints: a headless encoder ships its transformer body, not a head no loss trained.

A headless encoder's objective reads the body's output vectors and the input embeddings. Its
MLM head (BERT's transform and bias, ModernBERT's dense, norm and decoder bias) stays at its
initialisation. Saved under the pretraining class, `fill-mask` would answer noise without a
warning. So its checkpoint declares the family's base model (`BertModel`, `ModernBertModel`,
the class `AutoModel` builds) and holds the body's weights, as sentence-transformers
checkpoints do: `AutoModel.from_pretrained` loads it with no weight missing or unexpected.

A base class may hold a module the pretraining body lacks: BERT's pooler, which only BERT's
next-sentence task trained. It is shipped at its initialisation, drawn under the run's seed.
Fine-tuning leaves it unread (`unread_extras`): the pooler starts at random under the
fine-tuning seed, as it does for a vanilla MLM checkpoint, which has none.

The project's readers (validation, probes, BLiMP, `init_from`) load a body-only checkpoint
under the family's pretraining class (`zoo.train.checkpoint.load_model`); its head is then at
initialisation, under a fixed seed, and a reader that would score with it is refused
(`refuse_untrained_head`). Decoders keep their head: a headless decoder's head is its input
embedding matrix (`head_from_embeddings`), the scores its objective trained.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, cast

from zoo.errors import UserError

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel

    from zoo.models.spec import ModelSpec
    from zoo.objectives.declared import Objective

UNREAD = "hlm_unread."  # the prefix a weight left unread by a loader is renamed under
HEAD_SEED = 0  # a body-only checkpoint's head, when loaded under its pretraining class


def writes_body_only(
    model: PreTrainedModel, spec: type[ModelSpec] | ModelSpec, objective: Objective
) -> bool:
    """Whether this run's checkpoints ship the body only: its objective reads neither the
    vocabulary head nor separate output embeddings, and its family's head has modules of its
    own (an encoder's MLM transform) that such an objective never trains."""
    reads_head = objective.needs_head or objective.needs_output_embeddings
    return not reads_head and bool(spec.head_only_modules(model))


def body_class(config: PretrainedConfig) -> type[PreTrainedModel] | None:
    """The base model class `AutoModel` builds for this config (BertModel, ...), or None."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        found = MODEL_MAPPING[type(config)]
    except KeyError:
        return None
    return cast("type[PreTrainedModel]", found[0] if isinstance(found, tuple) else found)


def is_body_only(config: PretrainedConfig) -> bool:
    """Whether a checkpoint's config declares its family's base model (a body, no head)."""
    cls = body_class(config)
    return cls is not None and list(config.architectures or []) == [cls.__name__]


def body_model(
    model: PreTrainedModel, state_dict: dict[str, torch.Tensor] | None, seed: int
) -> PreTrainedModel:
    """The base model a body-only checkpoint holds: the pretraining model's body weights (from
    `state_dict`, its gathered parameters, where given), and any module the base class has
    beyond that body (BERT's pooler) at its initialisation under `seed`."""
    import torch
    from transformers import AutoModel

    prefix = f"{model.base_model_prefix}."
    full = state_dict if state_dict is not None else model.state_dict()
    body = {k.removeprefix(prefix): v for k, v in full.items() if k.startswith(prefix)}
    config = copy.deepcopy(model.config)  # the training model's config stays as it is
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        base = AutoModel.from_config(config)
    base.to(next(iter(body.values())).dtype)
    missing, unexpected = base.load_state_dict(body, strict=False)
    if unexpected or set(missing) - set(_extras(config)):
        raise RuntimeError(f"the body does not fit {type(base).__name__}: {missing} {unexpected}")
    return base


def unread_extras(config: PretrainedConfig) -> dict[str, str]:
    """`key_mapping` for `from_pretrained` that leaves a body-only checkpoint's extra modules
    (BERT's pooler, never trained here) unread: renamed under `UNREAD`."""
    return {rf"^{k.replace('.', '[.]')}$": f"{UNREAD}{k}" for k in _extras(config)}


def allowed_gaps(model: PreTrainedModel, info: dict[str, Any]) -> dict[str, Any]:
    """A body-only checkpoint's loading info less what it leaves out by design: the head's
    weights (outside the base model) and its extra modules left unread. A body weight
    missing or of another shape is kept, to be refused."""
    body = f"{model.base_model_prefix}."
    return {
        "missing_keys": [k for k in info["missing_keys"] if k.startswith(body)],
        "unexpected_keys": [k for k in info["unexpected_keys"] if not k.startswith(UNREAD)],
        "mismatched_keys": info.get("mismatched_keys", []),
    }


def refuse_untrained_head(model: PreTrainedModel, what: str) -> None:
    """A clear error where `what` would score with the head of a body-only checkpoint."""
    if is_body_only(model.config):
        raise UserError(
            f"{what} reads the vocabulary head, and this checkpoint ships its body only "
            f"({', '.join(model.config.architectures or [])}: its headless objective trained "
            "no head); score it with its own objective's scorer (cwt)"
        )


def _extras(config: PretrainedConfig) -> list[str]:
    """Weights the base class holds beyond the pretraining class's body (BERT's pooler), by
    building both on the meta device."""
    import torch
    from transformers import AutoModel

    from zoo.models import family_of

    with torch.device("meta"):
        base = AutoModel.from_config(copy.deepcopy(config))
        full = family_of(config).auto_class().from_config(copy.deepcopy(config))
    prefix = f"{full.base_model_prefix}."
    body = {k.removeprefix(prefix) for k in full.state_dict() if k.startswith(prefix)}
    return sorted(set(base.state_dict()) - body)
