"""Corpora: stream documents from local files, globs, folders, the synthetic generator or the Hub.

A source string is one of:
- ``synthetic`` or ``synthetic:N_DOCS``: the embedded synthetic language (`zoo.data.synthetic`);
- ``hub:NAME[:CONFIG][@SPLIT][#REVISION]``: a Hugging Face dataset id (or a local dataset
  folder), ``text`` column, read with ``streaming=True`` (nothing is downloaded whole), at
  the commit, tag or branch ``REVISION`` (default: the default branch, whose commit is asked
  and recorded);
- a local path, folder or glob of files of a type `zoo.data.readers` reads (``.txt``,
  ``.jsonl`` / ``.json``, ``.parquet``, FLORES-200's ``.dev`` / ``.devtest``, WikiExtractor's
  ``wiki_NN``).
Relative local paths are tried as given, then under ``$HLM_DATA_ROOT`` (default ``../shared/data``).

Each kind of source string is a `SourceKind` in `SOURCE_KINDS` (how it is recognised, checked,
read and fingerprinted); the first that matches a string decides what it is, everywhere.

Every reader yields one document at a time and holds at most one line, one Parquet batch or one
Hub example in memory: a corpus of any size streams through `iter_documents`. `fingerprint`
names a corpus by its files' contents (the token cache's key).
"""

from __future__ import annotations

import glob
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from zoo.checksums import file_sha256
from zoo.data.readers import iter_file, reader_of, unsupported
from zoo.data.synthetic import synthetic_corpus
from zoo.errors import UserError

log = logging.getLogger(__name__)

DATA_ROOT_ENV = "HLM_DATA_ROOT"
SYNTHETIC_DOCS = 2000  # documents of a bare `synthetic` source
SYNTHETIC_VERSION = 1  # bump when the generator's output changes: cached corpora are renamed


# the default data root: `shared/data` beside the project's checkout, wherever a command runs
DEFAULT_DATA_ROOT = Path(__file__).resolve().parents[3] / "shared" / "data"


def data_root() -> Path:
    """The local data root: $HLM_DATA_ROOT, else `DEFAULT_DATA_ROOT` (the checkout's
    `../shared/data`, the same from any working folder)."""
    given = os.environ[DATA_ROOT_ENV] if DATA_ROOT_ENV in os.environ else ""
    return Path(given).expanduser() if given else DEFAULT_DATA_ROOT


def resolve_local(source: str) -> list[Path]:
    """Files a local source names (path, folder or glob); [] if nothing matches. A path that
    exists as written is taken literally (`data[1].txt` is that file, not a pattern); an empty
    source names nothing."""
    if not source.strip():
        return []
    try:
        Path(source).expanduser()
    except RuntimeError:  # ~nosuchuser/x
        return []  # named by `_local_problem` as a path that matches no file
    for base in (Path("."), data_root()):
        pattern = (
            str(base / Path(source).expanduser()) if not Path(source).is_absolute() else source
        )
        literal = Path(pattern)
        matches = (
            [literal]
            if literal.exists()
            else sorted(Path(m) for m in glob.glob(pattern, recursive=True))
        )
        files: list[Path] = []
        for m in matches:
            if m.is_dir():
                files.extend(sorted(f for f in m.rglob("*") if reader_of(f) and f.is_file()))
            elif m.is_file():
                files.append(m)
        if files:
            return files
    return []


def _hub_parts(spec: str) -> tuple[str, str | None, str, str | None]:
    """`NAME[:CONFIG][@SPLIT][#REVISION]` as (name, config, split, revision)."""
    spec, _, revision = spec.partition("#")
    name, _, split = spec.partition("@")
    name, _, config = name.partition(":")
    return name, config or None, split or "train", revision or None


COMMIT = re.compile(r"[0-9a-f]{40}")  # a full commit id: a pin that names its contents


def _hub_problem(source: str) -> str | None:
    """Why a `hub:` source names nothing: no name, an empty `#`, or a revision given for a
    local dataset folder (its files' contents key it; no revision is read)."""
    spec = source[4:]
    if not spec or spec.startswith(("#", "@", ":")):
        return f"{source!r}: expected hub:NAME[:CONFIG][@SPLIT][#REVISION]"
    name, _, _, revision = _hub_parts(spec)
    if spec.endswith("#"):
        return f"{source!r}: an empty revision after '#': give a commit id, a tag or a branch"
    if revision is not None and Path(name).expanduser().is_dir():
        return f"{source!r}: {name} is a local dataset folder, with no revision: drop #{revision}"
    return None


def _iter_hub(spec: str) -> Iterator[str]:
    """A Hub dataset (or local dataset folder) streamed example by example."""
    name, config, split, revision = _hub_parts(spec)
    from datasets import load_dataset

    try:
        ds = load_dataset(name, config, split=split, streaming=True, revision=revision)
        examples = iter(ds)
        first = next(examples, None)
    except Exception as exc:  # network, auth, unknown id: all user-facing
        raise UserError(f"cannot load hub dataset {spec!r}: {type(exc).__name__}: {exc}") from exc
    if first is None:
        return
    if "text" not in first:
        raise UserError(f"hub dataset {spec!r} has no 'text' column ({', '.join(first)})")
    if first["text"]:
        yield first["text"]
    yield from (t for ex in examples if (t := ex["text"]))


UNVERSIONED = "unversioned"  # a Hub source's revision where none can be read (offline)


def _hub_revision(spec: str) -> str:
    """A Hub dataset's commit (a local dataset folder: its files' contents): the one pinned
    (`#COMMIT`, read without asking the Hub), or the one its branch or tag is at now; the
    name alone, with a warning, where none can be read (offline)."""
    name, _, _, revision = _hub_parts(spec)
    folder = Path(name).expanduser()
    if folder.is_dir():
        files = sorted(f for f in folder.rglob("*") if f.is_file())
        return ",".join(file_sha256(f) for f in files)
    if revision is not None and COMMIT.fullmatch(revision):
        return revision
    return _remote_revision(name, revision)


@lru_cache(maxsize=64)
def _remote_revision(name: str, revision: str | None = None) -> str:
    """A Hub dataset's commit (at `revision`, a branch or tag; the default branch if None),
    asked once a process: the key of a run's token stream and the text its checkpoint
    records read the same revision (and an offline machine warns once)."""
    try:
        from huggingface_hub import HfApi

        sha = HfApi().dataset_info(name, revision=revision).sha
        return str(sha)
    except Exception as exc:  # offline, private, unknown: the name is the best key left
        log.warning("hub:%s: no revision readable (%s): cached by name only", name, exc)
        return UNVERSIONED


def _synthetic_problem(source: str) -> str | None:
    n = source.partition(":")[2]
    ok = source == "synthetic" or (n.isascii() and n.isdecimal() and 0 < int(n) <= 10**9)
    return None if ok else f"{source!r}: expected synthetic:N_DOCS (1 to 10^9)"


def _synthetic_documents(source: str) -> Iterator[str]:
    n = source.partition(":")[2]
    yield from synthetic_corpus(int(n) if n else SYNTHETIC_DOCS)


def _local_problem(source: str) -> str | None:
    files = resolve_local(source)
    if not files:
        return f"no file matches {source!r} (looked in . and {DATA_ROOT_ENV}={data_root()})"
    unreadable = [f for f in files if reader_of(f) is None]
    return f"{source!r}: {unsupported(unreadable[0])}" if unreadable else None


def _local_documents(source: str) -> Iterator[str]:
    for f in resolve_local(source):
        yield from iter_file(f)


@dataclass(frozen=True)
class SourceKind:
    """One kind of corpus source: how a source string is recognised, checked, read, and
    named by its contents; `files`: the local files it names (their sizes, their overlap with
    the validation text), None for a kind that names no files."""

    name: str
    matches: Callable[[str], bool]
    problem: Callable[[str], str | None]  # why the string names nothing readable, or None
    documents: Callable[[str], Iterator[str]]
    fingerprint: Callable[[str], str]
    files: Callable[[str], list[Path]] | None = None


SYNTHETIC = SourceKind(
    "synthetic",
    lambda s: s == "synthetic" or s.startswith("synthetic:"),
    _synthetic_problem,
    _synthetic_documents,
    lambda s: f"{s}#v{SYNTHETIC_VERSION}",
)
HUB = SourceKind(
    "hub",
    lambda s: s.startswith("hub:"),
    _hub_problem,
    lambda s: _iter_hub(s[4:]),
    lambda s: f"{s}#{_hub_revision(s[4:])}",
)
LOCAL = SourceKind(
    "local",
    lambda s: True,
    _local_problem,
    _local_documents,
    lambda s: ",".join(file_sha256(f) for f in resolve_local(s)),
    files=resolve_local,
)
SOURCE_KINDS = (SYNTHETIC, HUB, LOCAL)  # the first that matches; anything else is a path


def source_kind(source: str) -> SourceKind:
    """The kind of corpus source `source` is (`SYNTHETIC`, `HUB` or `LOCAL`)."""
    return next(kind for kind in SOURCE_KINDS if kind.matches(source))


def source_problem(source: str) -> str | None:
    """Why `source` names no corpus (a malformed `synthetic:N`, an empty `hub:`, a local path
    that matches no file), or None. Hub sources are checked when read."""
    return source_kind(source).problem(source)


def hub_dataset(source: str) -> str | None:
    """The dataset id (or local dataset folder) of a `hub:` source; None for another kind."""
    return _hub_parts(source[4:])[0] if source_kind(source) is HUB else None


def local_files(source: str) -> list[Path]:
    """The files a local source names; [] for a synthetic or Hub source."""
    files = source_kind(source).files
    return files(source) if files is not None else []


def _check(sources: list[str]) -> None:
    for src in sources:
        problem = source_problem(src)
        if problem is not None:
            raise UserError(f"corpus source: {problem}")


def iter_documents(sources: list[str]) -> Iterator[str]:
    """All documents of all sources, in order, one at a time."""
    _check(sources)
    for src in sources:
        yield from source_kind(src).documents(src)


def local_bytes(sources: list[str]) -> int | None:
    """Total size of the sources' files, or None where one is synthetic or on the Hub."""
    if not all(source_kind(src).files is not None for src in sources):
        return None
    return sum(f.stat().st_size for src in sources for f in local_files(src))


def fingerprint(sources: list[str]) -> list[str]:
    """One entry per source naming its contents: file checksums, the Hub revision, or the
    synthetic generator's version and size."""
    _check(sources)
    return [source_kind(src).fingerprint(src) for src in sources]
