"""A small generic registry: decorator registration, no duplicates, helpful unknown-name errors.

    PRESETS: Registry[PresetBuilder] = Registry("preset")

    @PRESETS.register("bert-tiny")
    def bert_tiny(vocab_size: int = 4096) -> BertSpec: ...

    OBJECTIVES.add(
        "cwt", Objective("cwt", cwt_objective, needs_head=False, flops=contrastive_flops)
    )
    OBJECTIVES.get("cwtt")   # UserError: unknown objective 'cwtt'; did you mean 'cwt'? (known: ...)

Registration happens in the module that defines the registry's built-ins, which the package
imports explicitly (see `zoo.objectives.__init__`), never as a hidden side effect. Users add
entries from their own files with `load_plugin(path)`, or from an installed package that
declares a module in the `hlm.plugins` entry-point group (`load_installed_plugins`, called by
`hlm` before a verb runs, as pytest loads its plugins; HLM_DISABLE_PLUGIN_AUTOLOAD=1 skips it):

    [project.entry-points."hlm.plugins"]
    my_objectives = "my_package.objectives"
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from zoo.checksums import sha256_of
from zoo.errors import UserError, did_you_mean
from zoo.shipped import is_shipped

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to entries of type T; `kind` is used in messages ("objective", "preset")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}  # name -> the plugin module that registered it

    def add(self, name: str, entry: T) -> T:
        if not name or name != name.strip():
            raise ValueError(f"invalid {self.kind} name {name!r}")
        if name in self._entries:
            raise UserError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        if (module := _LOADING.get()) is not None:
            self._origins[name] = module
        return entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`."""

        def deco(entry: T) -> T:
            return self.add(name, entry)

        return deco

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise UserError(self.unknown_message(name)) from None

    def plugin(self, name: str) -> str | None:
        """The module of the plugin file that registered `name` (`plugin_module`), None for
        an entry of hlm's own or of an installed package (keyed by its version)."""
        return self._origins.get(name)

    def unknown_message(self, name: str) -> str:
        return unknown_name_message(self.kind, name, self.names())

    def names(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._entries.items())

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)


def unknown_name_message(kind: str, name: str, known: list[str], listed: int = 60) -> str:
    """`unknown KIND 'name'; did you mean 'x'? (known: ...)`, for any list of names (the
    list itself only when it holds at most `listed` names)."""
    hint = did_you_mean(name, known)
    names = ", ".join(known) if len(known) <= listed else f"{len(known)} names"
    return f"unknown {kind} {name!r}{hint} (known: {names})"


def check_name(kind: str, name: str, known: list[str]) -> str:
    """`name` if it is in `known`, else a UserError with close matches."""
    if name not in known:
        raise UserError(unknown_name_message(kind, name, known))
    return name


# the module of the plugin file being imported now: what its registrations come from
_LOADING: contextvars.ContextVar[str | None] = contextvars.ContextVar("loading", default=None)
_IMPORTED: dict[Path, str] = {}  # each plugin file imported -> the module of its code then

TRUST_ENV = "HLM_TRUST_PLUGINS"  # "1": files may name code to run (`--trust-plugins`)

# `--trust-plugins` for the command that runs now (`trusting`): a value scoped to that command,
# never written to the environment, so it outlives nothing and reaches no child process
_TRUSTED: contextvars.ContextVar[bool] = contextvars.ContextVar("plugins_trusted", default=False)


def plugins_trusted() -> bool:
    """Whether the user said that files may name code to run: `--trust-plugins` on the
    command running (`trusting`), or HLM_TRUST_PLUGINS=1 in their environment."""
    return _TRUSTED.get() or (TRUST_ENV in os.environ and os.environ[TRUST_ENV] == "1")


def may_run_code(path: Path) -> bool:
    """The one trust rule, for code a *file* names (a suite's or a run config's `plugins:`, a
    leaderboard's `_plugins/`, an lm-eval task folder whose YAMLs hold `!function` hooks):
    it runs only when it ships with the project (the installed `hlm.plugins` entry points, a
    file of the project's suites folder as git tracks it, byte for byte: `zoo.shipped`) or
    when the user trusts plugins (`plugins_trusted`). Where the file lies (beside the suite,
    inside a received leaderboard, copied into the project's suites folder) grants nothing."""
    return plugins_trusted() or is_shipped(path)


def untrusted_message(path: Path | str) -> str:
    """Why code a file named was not run, and how to run it."""
    return (
        f"{path} holds code that would run in this process: pass --trust-plugins (or set "
        "HLM_TRUST_PLUGINS=1) if you trust it, or install it as a package with an "
        "`hlm.plugins` entry point"
    )


def resolve_named(path: str | Path, named_in: Path | None) -> Path:
    """`path` as named by file `named_in`: relative to that file's folder (to the working
    folder for a path typed on the command line, `named_in` None); `~` expanded."""
    p = Path(path).expanduser()
    if named_in is not None and not p.is_absolute():
        p = named_in.parent / p
    return p.resolve()


def plugin_module(path: Path) -> str:
    """The private module name a plugin file's code is imported under: from its contents."""
    return "zoo_plugin_" + sha256_of(path)[:24]


def load_plugin(path: str | Path, *, trusted: bool) -> None:
    """Import a user's Python file so that its `@REGISTRY.register(...)` calls run.

    `trusted` says whether its code may run: True for a file the user typed on the command
    line (their choice, as `lm_eval --include_path` runs the folder it is given), else
    `may_run_code` for the file's path. Code already imported runs nothing and needs no trust.
    The file is imported under a private module name derived from its contents: loading the
    same code twice is a no-op, from the same file or a copy (a suite's and its leaderboard's
    record of it, `harness.suite.record`), while a file whose code differs registers anew.
    """
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise UserError(f"plugin file not found: {path}")
    mod_name = plugin_module(p)
    if p in _IMPORTED and _IMPORTED[p] != mod_name:
        raise UserError(
            f"plugin {path} changed since this process imported it: its old code is what "
            "registered its names here; run again in a new process"
        )
    if mod_name in sys.modules:  # this code, imported already (from here or a copy)
        _IMPORTED[p] = mod_name
        return
    if not trusted:
        raise UserError(untrusted_message(path))
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None or spec.loader is None:
        raise UserError(f"cannot import plugin {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    token = _LOADING.set(mod_name)
    try:
        spec.loader.exec_module(module)
    except UserError:
        del sys.modules[mod_name]
        raise
    except Exception as exc:
        del sys.modules[mod_name]
        raise UserError(f"plugin {path} failed to import: {type(exc).__name__}: {exc}") from exc
    finally:
        _LOADING.reset(token)
    _IMPORTED[p] = mod_name


def defined_in(code: object) -> str:
    """Where a registered entry's code comes from, for a record: hlm itself (its version), a
    plugin file (its name and the hash its module is named by), an installed package (its
    name and version), or else the module's name."""
    module = str(getattr(code, "__module__", "") or "")
    for path, name in _IMPORTED.items():
        if name == module:
            return f"plugin file {path.name} (sha256 {name.removeprefix('zoo_plugin_')})"
    top = module.split(".")[0]
    if top in ("zoo", "harness"):
        from zoo import __version__

        return f"hlm {__version__}"
    found = importlib.metadata.packages_distributions().get(top)
    if found:
        return f"package {found[0]} {importlib.metadata.version(found[0])}"
    return f"module {module}"


@contextlib.contextmanager
def trusting(trusted: bool = True) -> Iterator[None]:
    """Within, code from anywhere may run (`may_run_code`) if `trusted`; the setting before is
    restored after. For `--trust-plugins`, and for files a user named on the command line,
    which are their choice (as `lm_eval --include_path` runs the folder it is given)."""
    token = _TRUSTED.set(trusted or _TRUSTED.get())
    try:
        yield
    finally:
        _TRUSTED.reset(token)


ENTRY_POINTS = "hlm.plugins"
NO_AUTOLOAD = "HLM_DISABLE_PLUGIN_AUTOLOAD"


def load_installed_plugins() -> list[str]:
    """Import the module of every installed `hlm.plugins` entry point (each registers its
    objectives, presets or task types as it is imported); their names, in load order."""
    from importlib.metadata import entry_points

    if os.environ.get(NO_AUTOLOAD, "") not in ("", "0"):
        return []
    loaded = []
    for ep in sorted(entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        try:
            ep.load()
        except UserError:
            raise
        except Exception as exc:
            raise UserError(
                f"installed plugin {ep.name} ({ep.value}, entry point group {ENTRY_POINTS}) "
                f"failed to import: {type(exc).__name__}: {exc}"
            ) from exc
        loaded.append(ep.name)
    return loaded


@functools.cache
def resolve_target(target: str) -> Any:
    """The object a "module:name" string names, imported at the first call and remembered
    (the verb table's commands, the built-in objectives' losses); a clear error naming the
    target when it cannot be imported."""
    module, _, name = target.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise UserError(f"{target!r} cannot be imported: {exc}") from None
