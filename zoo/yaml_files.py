"""Reading YAML files strictly: UTF-8 text, no duplicate keys, errors that name the file and line.

    data = read_yaml(Path("suites/quickstart.yaml"))   # raises YamlFileError

PyYAML alone lets the last of two equal keys win silently and lets bytes that are not UTF-8
escape as a `UnicodeDecodeError` traceback; every YAML file the project reads from a user (suites,
pretraining configs, a run's recorded config) goes through `read_yaml` instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from zoo.errors import UserError
from zoo.reader import MAX_TEXT_BYTES, read_bytes


class YamlFileError(UserError):
    """A YAML file that does not read; `where` is `line N`, `<root>` or None (the whole file),
    `problem` the reason."""

    def __init__(self, path: Path, where: str | None, problem: str) -> None:
        self.path, self.where, self.problem = path, where, problem
        super().__init__(f"{path}: {where}: {problem}" if where else f"{path}: {problem}")


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with the same key twice."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            repeated = key in seen
        except TypeError:  # an unhashable key: SafeLoader's own error says so
            break
        first = seen.setdefault(key, key_node.start_mark.line + 1)
        if repeated:  # on another line or the same one (`{steps: 5, steps: 6}`)
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r}, first on line {first}",
                key_node.start_mark,
            )
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _refuse_tag(loader: _StrictLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None, None, f"{node.tag}: not a value a config holds (bytes, a set)", node.start_mark
    )


# bytes and sets read as no setting does: refused where they stand, not met deep inside
for _tag in ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:set", "tag:yaml.org,2002:omap"):
    _StrictLoader.add_constructor(_tag, _refuse_tag)


def parse_yaml(text: str, path: Path) -> Any:
    """The YAML document in `text` (read from `path`, named in errors)."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "<root>"
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlFileError(path, where, f"invalid YAML ({problem})") from None
    except RecursionError:
        raise YamlFileError(path, None, "nested too deeply to be a config") from None


def read_yaml(path: Path) -> Any:
    """The YAML document in the file `path`: a YamlFileError when it is missing, not UTF-8 text
    or not valid YAML (a key given twice included)."""
    if not path.is_file():  # a FIFO or device would block or never end: not read
        there = path.exists() or path.is_symlink()
        raise YamlFileError(path, None, "not a regular file" if there else "file not found")
    try:  # the one reader: checked on the open file, bounded (a 4 GB file is not loaded)
        raw = read_bytes(path, "a YAML file", MAX_TEXT_BYTES)
    except UserError as exc:
        raise YamlFileError(path, None, str(exc).removeprefix(f"{path}: ")) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlFileError(
            path, "<root>", f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_yaml(text, path)


def read_yaml_mapping(path: Path, what: str) -> dict[str, Any]:
    """`read_yaml`, which must give a mapping (`what` names its keys in the error); an empty
    file gives {}."""
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise YamlFileError(
            path, "<root>", f"expected a mapping of {what}, got {type(data).__name__}"
        )
    return data
