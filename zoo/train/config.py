"""The pretraining configuration: one typed model, from a YAML file, CLI flags or a suite cell.

`PretrainConfig` is made of sections (`zoo.train.sections`: objective, model, data,
optimisation, schedule, evaluation, runtime); its keys stay flat (`lr:`, not `optim.lr:`), each
name unique across sections, so a YAML file, a flag (`--lr`) and a suite recipe spell a setting
the same way. Each field declares its role (`zoo.train.roles`): whether it defines the
weights (the pretraining key; refused when changed on `--resume`), may change on resume
(recorded), or is runtime only (never in the key).

Fields left as ``None`` take the preset's paper recipe (Appendix D) when resolved by
`resolve_recipe`. A run writes this config, as given, to `config.yaml` (`hlm pretrain --config
RUN/config.yaml` repeats it) and the numbers it resolved to `resolved.yaml`. Every value is
range-checked here, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from zoo.errors import UserError, format_validation_error
from zoo.objectives.declared import built_in_option
from zoo.registry import load_plugin, resolve_named
from zoo.train.identity import key_fields
from zoo.train.sections import (
    DataSettings,
    EvaluationSettings,
    ModelSettings,
    ObjectiveSettings,
    OptimSettings,
    RuntimeSettings,
    ScheduleSettings,
)
from zoo.train.sections.training import Schedule
from zoo.yaml_files import read_yaml_mapping

if TYPE_CHECKING:
    from zoo.data.cache import TrainingCorpus

__all__ = ["SECTIONS", "PretrainConfig", "Schedule"]

# The sections in the order their fields are validated (a later section's checks may read an
# earlier one's values: the data's seq_len reads the model's preset).
SECTIONS = (
    ObjectiveSettings,
    ModelSettings,
    DataSettings,
    OptimSettings,
    ScheduleSettings,
    EvaluationSettings,
    RuntimeSettings,
)


class PretrainConfig(*reversed(SECTIONS)):  # type: ignore[misc]  # pydantic orders fields base-last
    """Every setting of a pretraining run, validated once (unknown keys refused)."""

    def training_text(self) -> TrainingCorpus:
        """The training text, and its validation sources or the part held out of it."""
        from zoo.data.cache import training_corpus  # tokenizers and numpy: only when training

        return training_corpus(
            self.corpus, self.validation, self.max_documents, self.validation_fraction, self.seed
        )

    def key_fields(self) -> dict[str, Any]:
        """The settings that make the pretraining key (`zoo.train.identity`: those that
        define the weights or that a resume may change, each where it differs from its
        baseline; JSON values, the loss options with the objective's own)."""
        return key_fields(self)

    def multiplies_as_before_score_dtype(self) -> bool:
        """Whether the code before ``loss.score_dtype`` computed this run's score products as
        the code does now. Without bf16, all was and is fp32. Under bf16, that code multiplied
        the plain vocabulary loss's logits in bf16, as ``autocast`` does now, and every other
        loss's products in fp32; only that first case is taken as the same computation (what
        re-keying old rows and resuming an old run rely on)."""
        if not self.bf16:
            return True
        plain_ce = self.objective == "ce" and built_in_option(self.loss, "ce_impl") == "plain"
        return plain_ce and built_in_option(self.loss, "score_dtype") == "autocast"

    def as_given(self) -> dict[str, Any]:
        """Every field as JSON values, as `config.yaml` holds it (`--config` reads it back)."""
        return self.model_dump(mode="json")


# The keys whose values name registry entries a plugin may add: before the plugins are
# imported, a problem there may be one the plugins resolve, so it waits for them.
NAMED_BY_PLUGINS = frozenset({"objective", "loss", "preset", "report_to"})


def load_config(
    path: str | None, overrides: dict[str, Any], *, trust_plugins: bool = False
) -> PretrainConfig:
    """A config from an optional YAML file, with CLI `overrides` (non-None values) on top.

    `overrides` may hold a ``loss`` mapping; its keys are merged into the file's ``loss:``.
    Plugins are imported only once every other key has validated, and a file's own
    ``plugins:`` (read from the file's folder) only with `trust_plugins`: a config someone
    sent runs no code of theirs unless the user says so. ``--plugins`` typed on the command
    line is the user's own choice, as ``lm_eval --include_path`` is."""
    data: dict[str, Any] = read_yaml_mapping(Path(path), "config keys") if path is not None else {}
    if "loss" in data and not isinstance(data["loss"], dict):  # else `--loss.*` would drop it
        raise UserError(
            f"{path}: loss: should be a mapping of loss options by name (`temperature: 0.1`), "
            f"not {type(data['loss']).__name__} {data['loss']!r}"
        )
    loss = {**(data["loss"] if "loss" in data else {})}
    loss.update({k: v for k, v in overrides.pop("loss", {}).items() if v is not None})
    typed = overrides.pop("plugins", None)
    data.update({k: v for k, v in overrides.items() if v is not None})
    if loss:
        data["loss"] = loss
    if typed:  # the command line's replace the file's, read from the working folder
        data["plugins"], trusted = [str(resolve_named(p, None)) for p in typed], True
    else:
        data["plugins"], trusted = _file_plugins(data, path), trust_plugins
    source = path or "command line"
    if data["plugins"]:
        _import_after_validation(data, source, trusted)
    try:
        return PretrainConfig.model_validate(data)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, source, model=PretrainConfig)) from None


def _file_plugins(data: dict[str, Any], path: str | None) -> Any:
    """The file's ``plugins:``, each read from the file's folder (a value that is not a list
    of paths as given, for validation to name)."""
    plugins = data["plugins"] if "plugins" in data else []
    plugins = [plugins] if isinstance(plugins, str) else plugins  # one path, as `listed` reads
    if path is None or not isinstance(plugins, list):
        return plugins
    return [str(resolve_named(p, Path(path))) if isinstance(p, str) else p for p in plugins]


def _import_after_validation(data: dict[str, Any], source: str, trusted: bool) -> None:
    """Validate `data`; if nothing is wrong but what plugins may register, import them."""
    try:
        PretrainConfig.model_validate(data)
        problems: list[Any] = []
    except ValidationError as exc:
        problems = [e for e in exc.errors() if not e["loc"] or e["loc"][0] not in NAMED_BY_PLUGINS]
        if problems:
            raise UserError(format_validation_error(exc, source, model=PretrainConfig)) from None
    for i, plugin in enumerate(data["plugins"]):
        try:
            load_plugin(plugin, trusted=trusted)
        except UserError as exc:
            raise UserError(f"{source}: plugins[{i}]: {exc}") from None
