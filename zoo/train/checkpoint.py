"""Checkpoints: plain Hugging Face model folders, written atomically.

A checkpoint folder holds `model.safetensors`, `config.json`, the tokenizer files and
`hlm_metadata.json` (`zoo.train.metadata`). Intermediate checkpoints also hold
`training_state.pt` (scheduler, counters) and `sharded/` (the model and optimizer state
through torch.distributed.checkpoint, `zoo.train.sharded`) for `--resume`. The folder is written
under a temporary name and renamed, so a killed run never leaves a half-written checkpoint,
and its commit marker (`hlm_commit.json`, written last) holds every file's size and sha256:
`checkpoint_problem` says whether a folder can still be trusted (both in `zoo.train.atomic`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file
from transformers import AutoConfig, PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

from zoo.checkpoint_files import check_model_config, check_tokenizer_fits
from zoo.errors import UserError, did_you_mean
from zoo.models import family_of
from zoo.train.atomic import COMMIT, atomic_dir_write, checkpoint_problem, write_commit
from zoo.train.body_only import HEAD_SEED, allowed_gaps, body_model, is_body_only, unread_extras
from zoo.train.metadata import CheckpointMetadata, find_metadata, write_metadata
from zoo.train.safe_load import write_state

log = logging.getLogger(__name__)

WEIGHTS = "model.safetensors"


def save_checkpoint(
    path: Path,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    metadata: CheckpointMetadata,
    training_state: dict[str, Any] | None = None,
    state_dict: dict[str, torch.Tensor] | None = None,
    tmp: Path | None = None,
    body_only: bool = False,
) -> Path:
    """A checkpoint folder: the model (or `state_dict`, its gathered parameters, under its
    config; with `body_only`, its base model alone: `zoo.train.body_only`), the tokenizer, the
    metadata, the training state, the commit marker; written into `tmp` (which may hold the
    sharded state already) and renamed to `path`."""

    def write(tmp: Path) -> None:
        if body_only:
            body_model(model, state_dict, metadata.seed).save_pretrained(tmp)
        else:
            model.save_pretrained(tmp, state_dict=state_dict)
        tokenizer.save_pretrained(tmp)
        write_metadata(tmp, metadata)
        if training_state is not None:
            write_state(tmp, training_state)
        write_commit(tmp)

    return atomic_dir_write(path, write, tmp)


def load_weights(model: PreTrainedModel, folder: Path) -> None:
    """Load a checkpoint's weights into `model`, strictly: a missing or unexpected key is an
    error naming the file, except a missing key whose parameter is tied to a loaded one (Hugging
    Face saves a tied head once)."""
    state = load_file(str(folder / WEIGHTS))
    missing, unexpected = model.load_state_dict(state, strict=False)
    params = dict(model.named_parameters(remove_duplicate=False))
    loaded = {id(params[k]) for k in state if k in params}
    untied = [k for k in missing if k not in params or id(params[k]) not in loaded]
    if untied or unexpected:
        raise UserError(
            f"{folder / WEIGHTS}: does not fit the model (missing: {', '.join(untied) or 'none'}; "
            f"unexpected: {', '.join(unexpected) or 'none'})"
        )


# folders whose files matched their marker, by path and each file's size and mtime: a
# checkpoint read by several tasks is hashed once, and hashed again once a file changes
_VERIFIED: set[tuple[object, ...]] = set()


def verify_checkpoint(folder: Path, name: str) -> None:
    """A clear error naming `name` when `folder`'s files no longer match its commit marker."""
    stats = sorted(
        (f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in folder.rglob("*") if f.is_file()
    )
    key = (str(folder.resolve()), *stats)
    if key in _VERIFIED:
        return
    problem = checkpoint_problem(folder)
    if problem is not None:
        raise UserError(f"checkpoint {name}: {problem}")
    _VERIFIED.add(key)


def _surely_local(name: str, p: Path) -> bool:
    """Whether a name that is not here can be no Hub id (OWNER/NAME): a path from . or /,
    one of more than two parts, or one in a folder that is here (`runs/typo`)."""
    return (
        name.startswith((".", "/"))
        or (os.sep in name and name.count("/") > 1)
        or (p.parent != Path(".") and p.parent.is_dir())
    )


def not_found(name: str) -> UserError:
    """`checkpoint not found: runs/typo; did you mean 'run'?` (the names beside it)."""
    p = Path(name)
    near = sorted(c.name for c in p.parent.iterdir()) if p.parent.is_dir() else []
    return UserError(f"checkpoint not found: {name}{did_you_mean(p.name, near)}")


def hf_config(name_or_path: str) -> PretrainedConfig:
    """A checkpoint's (local folder or hub id) Hugging Face config, or a clear error."""
    p = Path(name_or_path)
    if not p.exists() and _surely_local(name_or_path, p):
        raise not_found(name_or_path)
    if p.is_dir() and (p / COMMIT).is_file():  # one of ours: its files as they were written
        verify_checkpoint(p, name_or_path)
    if p.is_dir():  # a folder someone may have sent: its shapes, before any model is built
        check_model_config(p)
        check_tokenizer_fits(p)
    if not p.exists():  # the Hub's retries take a while where it is unreachable
        from huggingface_hub import constants

        where = "in the Hub's local cache" if constants.HF_HUB_OFFLINE else "on the Hub"
        log.info("%s: no such folder or run name here; looking %s", name_or_path, where)
    try:
        config: PretrainedConfig = AutoConfig.from_pretrained(name_or_path)
    except (OSError, ValueError) as exc:
        where = "" if p.exists() else "no such folder or run name (`hlm runs`), and the Hub: "
        raise UserError(f"cannot load checkpoint {name_or_path!r}: {where}{exc}") from None
    return config


def load_model(name_or_path: str) -> PreTrainedModel:
    """A checkpoint (local folder or hub id) through its family's Auto class, strictly: weights
    that do not fit the architecture (missing, unexpected or of another shape) are an error
    naming them, never a model left partly at random."""
    model, info = _load_by_family(name_or_path)
    _refuse_unfit(name_or_path, info)
    return model


def check_weights_fit(name_or_path: str) -> None:
    """Refuse a checkpoint that would load with part of its model at random: a weight its
    architecture has that the file lacks, or holds in another shape. For a loader that only
    warns of them (lm-eval's, through transformers' log, held to errors here). Weights the
    file holds beyond the architecture are left unread, as the loader leaves them."""
    _, info = _load_by_family(name_or_path)
    _refuse_unfit(name_or_path, {k: info[k] for k in ("missing_keys", "mismatched_keys")})


def load_under_new_head(auto: Any, name_or_path: str, **kwargs: Any) -> PreTrainedModel:
    """A checkpoint's pretrained body under a task's new head (`auto`, e.g.
    AutoModelForSequenceClassification; `kwargs` to its from_pretrained). Only the head may
    start at random: the modules outside the base model (classifier, score) and BERT's pooler
    (an MLM checkpoint has none, as Hugging Face's BertForMaskedLM builds none; a body-only
    one of ours holds it at initialisation, left unread). A weight of
    the body missing from the checkpoint, or of another shape, is an error naming it: a body
    left partly at random would be scored as the pretrained model. The pretraining head's
    weights (`cls.*`, an LM head) are the checkpoint's own and are left unread."""
    config = hf_config(name_or_path)  # its files as written (commit marker), a config that reads
    if is_body_only(config) and find_metadata(name_or_path) is not None:
        kwargs = {"key_mapping": unread_extras(config), **kwargs}  # BERT's pooler, at init
    model, info = _from_pretrained(auto, name_or_path, **kwargs)
    body = f"{model.base_model_prefix}."
    new_body = [
        k for k in info["missing_keys"] if k.startswith(body) and not k.startswith(f"{body}pooler.")
    ]
    _refuse_unfit(
        name_or_path, {"missing_keys": new_body, "mismatched_keys": info["mismatched_keys"]}
    )
    return model


def _load_by_family(name_or_path: str) -> tuple[PreTrainedModel, Any]:
    """A checkpoint through its family's Auto class, with the loading info. A body-only
    checkpoint (a headless encoder's) gets its head at initialisation under a fixed seed,
    and the info leaves out what it lacks by design (`zoo.train.body_only`)."""
    config = hf_config(name_or_path)
    auto = family_of(config).auto_class()
    if not is_body_only(config):
        return _from_pretrained(auto, name_or_path)
    with torch.random.fork_rng(devices=[]), _transformers_quiet():  # its report: our gaps
        torch.manual_seed(HEAD_SEED)
        model, info = _from_pretrained(auto, name_or_path, key_mapping=unread_extras(config))
    log.info("%s: a body-only checkpoint; its head starts at initialisation", name_or_path)
    return model, allowed_gaps(model, info)


@contextmanager
def _transformers_quiet() -> Iterator[None]:
    """transformers' loading report held back (its level raised to errors for the block)."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def _from_pretrained(auto: Any, name_or_path: str, **kwargs: Any) -> tuple[PreTrainedModel, Any]:
    """`auto.from_pretrained` with its loading info; a file that does not load is a UserError."""
    try:
        model, info = auto.from_pretrained(name_or_path, output_loading_info=True, **kwargs)
    except (OSError, ValueError, RuntimeError, SafetensorError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UserError(f"cannot load checkpoint {name_or_path!r}: {first}") from None
    return cast(PreTrainedModel, model), info


def _refuse_unfit(name_or_path: str, info: Any) -> None:
    """An error naming the keys of `info` (missing, unexpected, mismatched) that are not empty."""
    wrong = {
        kind: sorted(str(k) for k in info[kind])
        for kind in ("missing_keys", "unexpected_keys", "mismatched_keys")
        if info.get(kind)
    }
    if wrong:
        said = "; ".join(f"{k.replace('_', ' ')}: {', '.join(v[:8])}" for k, v in wrong.items())
        raise UserError(f"{name_or_path}: the weights do not fit its config ({said})")
