"""Corpora: read documents from local files, globs, folders, the synthetic generator or the Hub.

A source string is one of:
- ``synthetic`` or ``synthetic:N_DOCS``: the embedded synthetic language (`zoo.data.synthetic`);
- ``hub:NAME[:CONFIG][@SPLIT]``: a Hugging Face dataset id, ``text`` column (needs network);
- a local path, folder or glob of ``.txt`` (documents separated by blank lines), ``.jsonl`` /
  ``.json`` (one object per line with a ``text`` field) or ``.parquet`` (``text`` column).
Relative local paths are tried as given, then under ``$HLM_DATA_ROOT`` (default ``../shared/data``).
"""

from __future__ import annotations

import glob
import json
import os
import random
import re
from pathlib import Path

from zoo.data.synthetic import synthetic_corpus
from zoo.errors import UserError

DATA_ROOT_ENV = "HLM_DATA_ROOT"
SUPPORTED = (".txt", ".jsonl", ".json", ".parquet")


def data_root() -> Path:
    """The local data root: $HLM_DATA_ROOT, default ../shared/data (from the working directory)."""
    return Path(os.environ.get(DATA_ROOT_ENV, "../shared/data")).expanduser()


def resolve_local(source: str) -> list[Path]:
    """Files a local source names (path, folder or glob); [] if nothing matches."""
    for base in (Path("."), data_root()):
        pattern = (
            str(base / Path(source).expanduser()) if not Path(source).is_absolute() else source
        )
        matches = sorted(Path(m) for m in glob.glob(pattern, recursive=True))
        files: list[Path] = []
        for m in matches:
            if m.is_dir():
                files.extend(
                    sorted(f for f in m.rglob("*") if f.suffix in SUPPORTED and f.is_file())
                )
            elif m.is_file():
                files.append(m)
        if files:
            return files
    return []


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # e.g. NLTK's Gutenberg files


def read_file(path: Path) -> list[str]:
    """Documents in one file."""
    if path.suffix == ".txt":
        return [d.strip() for d in re.split(r"\n\s*\n", _read_text(path)) if d.strip()]
    if path.suffix in (".jsonl", ".json"):
        docs = []
        for i, line in enumerate(_read_text(path).split("\n")):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{i + 1}: not a JSON line ({exc.msg})") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                raise UserError(f"{path}:{i + 1}: expected an object with a 'text' string")
            docs.append(obj["text"])
        return docs
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        if "text" not in table.column_names:
            raise UserError(f"{path}: no 'text' column (columns: {', '.join(table.column_names)})")
        return [t for t in table.column("text").to_pylist() if t]
    raise UserError(f"{path}: unsupported file type (supported: {', '.join(SUPPORTED)})")


def _read_hub(spec: str) -> list[str]:
    name, _, split = spec.partition("@")
    name, _, config = name.partition(":")
    from datasets import load_dataset

    try:
        ds = load_dataset(name, config or None, split=split or "train")
    except Exception as exc:  # network, auth, unknown id: all user-facing
        raise UserError(f"cannot load hub dataset {spec!r}: {type(exc).__name__}: {exc}") from exc
    if "text" not in ds.column_names:
        raise UserError(f"hub dataset {spec!r} has no 'text' column ({', '.join(ds.column_names)})")
    return [t for t in ds["text"] if t]


def source_problem(source: str) -> str | None:
    """Why `source` names no corpus (a malformed `synthetic:N`, an empty `hub:`, a local path
    that matches no file), or None. Hub sources are checked when read."""
    if source == "synthetic" or source.startswith("synthetic:"):
        n = source.partition(":")[2]
        return None if not n or n.isdigit() else f"{source!r}: expected synthetic:N_DOCS"
    if source.startswith("hub:"):
        return None if source[4:] else f"{source!r}: expected hub:NAME[:CONFIG][@SPLIT]"
    if not resolve_local(source):
        return f"no file matches {source!r} (looked in . and {DATA_ROOT_ENV}={data_root()})"
    return None


def load_documents(sources: list[str]) -> list[str]:
    """All documents of all sources, in order."""
    docs: list[str] = []
    for src in sources:
        problem = source_problem(src)
        if problem is not None:
            raise UserError(f"corpus source: {problem}")
        if src == "synthetic" or src.startswith("synthetic:"):
            n = src.partition(":")[2]
            docs.extend(synthetic_corpus(int(n) if n else 2000))
        elif src.startswith("hub:"):
            docs.extend(_read_hub(src[4:]))
        else:
            for f in resolve_local(src):
                docs.extend(read_file(f))
    if not docs:
        raise UserError(f"corpus {sources} holds no documents")
    return docs


def split_documents(docs: list[str], fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Deterministic (train, validation) split holding out `fraction` of the documents."""
    if not 0 < fraction < 1:
        raise UserError(f"validation fraction must be in (0, 1), got {fraction}")
    idx = list(range(len(docs)))
    random.Random(seed).shuffle(idx)
    n_val = max(1, round(len(docs) * fraction))
    if n_val >= len(docs):
        raise UserError(
            f"corpus has only {len(docs)} documents: too few to hold out a validation set"
        )
    val = sorted(idx[:n_val])
    train = sorted(idx[n_val:])
    return [docs[i] for i in train], [docs[i] for i in val]


def training_documents(
    corpus: list[str],
    validation: list[str] | None,
    max_documents: int | None,
    validation_fraction: float,
    seed: int,
) -> tuple[list[str], list[str]]:
    """(train, validation) documents: the validation sources where given, else a held-out
    `validation_fraction` of the (first `max_documents`) corpus documents."""
    docs = load_documents(corpus)
    if max_documents is not None:
        docs = docs[:max_documents]
    if validation:
        return docs, load_documents(validation)
    return split_documents(docs, validation_fraction, seed)
