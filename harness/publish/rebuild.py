"""A model card's training configuration, as a run that rebuilds the checkpoint: what
`hlm pretrain --config` reads, from the published repository alone.

The checkpoint's metadata holds the resolved run config (every setting, defaults included,
so a default that moves later changes nothing). Three things would not rebuild as recorded:

- a plugin objective: its file is shipped in the repository (`plugins/NAME.py`, the same
  bytes that trained it, checked by the digest its module was named by), and the config
  names that copy;
- a causally fine-tuned checkpoint's `init_from`, a local folder: the config names the
  published parent repository (`--base-model`), else says the parent is not published;
- an intermediate checkpoint (`checkpoints/step-N/`): the config is its run's, with step N
  among `save_at_steps`, and the card says the rebuild writes it there.

    rebuild = rebuild_config(Path("runs/pretrain/KEY/final"), meta, base_model=None)
    rebuild.config, rebuild.plugins, rebuild.notes
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoo.errors import UserError
from zoo.registry import plugin_module
from zoo.train.metadata import CheckpointMetadata
from zoo.yaml_files import read_yaml_mapping

PLUGINS = "plugins"  # the repository's folder of the plugin files a config names
SOURCE = re.compile(r"^plugin file (?P<name>.+) \(sha256 (?P<digest>[0-9a-f]+)\)$")
RUN_CONFIG = "config.yaml"  # the run config `hlm pretrain` writes in its output folder


@dataclass
class Rebuild:
    """The config that rebuilds a checkpoint, the plugin files it needs (source file, name
    in the repository), and what the card says of it."""

    config: dict[str, Any]
    plugins: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def intermediate(checkpoint: Path) -> bool:
    """Whether the folder is a checkpoint along its run (`checkpoints/step-N/`)."""
    return checkpoint.resolve().parent.name == "checkpoints"


def run_folder(checkpoint: Path) -> Path:
    """The output folder of the run that wrote `checkpoint` (its `final/` or a step)."""
    ckpt = checkpoint.resolve()
    return ckpt.parent.parent if intermediate(ckpt) else ckpt.parent


def rebuild_config(
    checkpoint: Path, meta: CheckpointMetadata, base_model: str | None
) -> Rebuild | None:
    """The run that rebuilds `checkpoint`, None for one that predates its config record."""
    if not meta.config:
        return None
    out = Rebuild(dict(meta.config))
    out.config.pop("plugins", None)
    if meta.objective_source and (found := SOURCE.match(meta.objective_source)):
        source = _plugin_file(checkpoint, found["name"], found["digest"])
        out.plugins.append((source, f"{PLUGINS}/{found['name']}"))
        out.config["plugins"] = [f"{PLUGINS}/{found['name']}"]
        out.notes.append(
            f"The objective comes from the plugin file `{PLUGINS}/{found['name']}` in this "
            f"repository (the code that trained it: sha256 {found['digest']}...)."
        )
    if out.config.get("init_from"):
        out.config["init_from"] = base_model
        out.notes.append(
            f"`init_from` names the parent checkpoint, `{base_model}`."
            if base_model
            else "Its parent checkpoint was not published (`init_from` is left empty): "
            "rebuild it from the parent's own card, then set `init_from` to that folder."
        )
    if intermediate(checkpoint):
        saved = set(out.config.get("save_at_steps") or [])
        out.config["save_at_steps"] = sorted(saved | {meta.steps})
        out.notes.append(
            f"This is an intermediate checkpoint: step {meta.steps} of a run of "
            f"{out.config.get('steps')} steps. The config rebuilds the whole run, which writes "
            f"it as `checkpoints/step-{meta.steps:07d}/` on its way."
        )
    return out


def _plugin_file(checkpoint: Path, name: str, digest: str) -> Path:
    """The plugin file that trained the run (named in the run's config.yaml), checked to be
    the same code; an error naming what is missing or changed."""
    run = run_folder(checkpoint)
    record = run / RUN_CONFIG
    if not record.is_file():
        raise UserError(
            f"{checkpoint}: trained by plugin {name}, and its run's {RUN_CONFIG} (which names "
            "the file) is not beside it: the card could not ship the plugin's code"
        )
    paths = read_yaml_mapping(record, "run config keys").get("plugins") or []
    for text in paths if isinstance(paths, list) else []:
        path = Path(str(text))
        if not path.is_absolute():
            path = record.parent / path
        if path.name == name and path.is_file():
            if plugin_module(path).removeprefix("zoo_plugin_") != digest:
                raise UserError(
                    f"{checkpoint}: plugin {path} was edited since it trained this checkpoint "
                    f"(sha256 {digest}...): the card would ship other code"
                )
            return path
    raise UserError(
        f"{checkpoint}: trained by plugin {name}, which {record} does not name as a file "
        "that exists: the card could not ship the plugin's code"
    )
