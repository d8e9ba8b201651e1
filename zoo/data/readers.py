"""File readers: the documents of one local file, by its type, one at a time.

``.txt`` (documents separated by blank lines), ``.jsonl`` / ``.json`` (one object per line with a
``text`` field), ``.parquet`` (``text`` column), FLORES-200's ``.dev`` / ``.devtest`` (one
sentence, a document, per line) and WikiExtractor's ``wiki_NN`` files (articles between
``<doc>`` tags, the extractor's markup residue removed). Each reader holds at most one line or
one Parquet batch in memory. A new file type is one reader and its suffix in `READERS`.
`zoo.data.corpus` turns source strings (paths, folders, globs) into these files.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from zoo.errors import UserError
from zoo.reader import open_regular, read_bytes


def _encoding(path: Path) -> str:
    """utf-8 when the whole file decodes as such, else latin-1 (e.g. NLTK's Gutenberg files);
    checked in 1 MiB pieces."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open_regular(path, "a corpus file", max_bytes=None) as f:
            for piece in iter(lambda: f.read(1 << 20), b""):
                decoder.decode(piece)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return "latin-1"
    return "utf-8"


def _lines(path: Path) -> Iterator[str]:
    """The file's lines (split on \\n only, without it), decoded one at a time."""
    encoding = _encoding(path)
    with open_regular(path, "a corpus file", max_bytes=None) as f:
        for raw in f:
            yield raw.decode(encoding).removesuffix("\n")


def _text_documents(path: Path) -> Iterator[str]:
    """Documents of a .txt file: runs of lines between blank (whitespace-only) lines, stripped."""
    lines: list[str] = []
    for line in _lines(path):
        if line.strip():
            lines.append(line)
        elif lines:
            yield "\n".join(lines).strip()
            lines = []
    if lines:
        yield "\n".join(lines).strip()


def _line_documents(path: Path) -> Iterator[str]:
    """Documents of a one-sentence-per-line file (FLORES-200): each non-blank line, stripped."""
    yield from (line.strip() for line in _lines(path) if line.strip())


def _json_documents(path: Path) -> Iterator[str]:
    for i, line in enumerate(_lines(path)):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{i + 1}: not a JSON line ({exc.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise UserError(f"{path}:{i + 1}: expected an object with a 'text' string")
        yield obj["text"]


def _parquet_documents(path: Path) -> Iterator[str]:
    """The `text` column's strings; a file that is no Parquet, a damaged one or a column of
    another type is refused by name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(pa.BufferReader(read_bytes(path, "a corpus file")))
        names = table.schema_arrow.names
        if "text" not in names:
            raise UserError(f"{path}: no 'text' column (columns: {', '.join(names)})")
        kind = table.schema_arrow.field("text").type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise UserError(f"{path}: the 'text' column holds {kind}, not strings")
        for batch in table.iter_batches(batch_size=1024, columns=["text"]):
            yield from (t for t in batch.column(0).to_pylist() if t)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a readable Parquet file ({exc})") from None


_RESIDUE = re.compile(
    r"\b(?:formula|codice)_\d+\b"  # math and code placeholders
    r"|\{\{[^{}]*\}\}"  # template fragments
    r"|</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>"  # stray HTML tags
)


def _wikiextractor_documents(path: Path) -> Iterator[str]:
    """Articles of a WikiExtractor output file (`wiki_NN`): the lines between a `<doc ...>`
    line and `</doc>`, title first, with the markup residue the extractor leaves (math and
    code placeholders, template fragments, stray HTML tags) removed."""
    lines: list[str] = []
    inside = False
    for line in _lines(path):
        if line.startswith("<doc "):
            inside, lines = True, []
        elif line.strip() == "</doc>":
            text = "\n".join(x for x in lines if x)
            if inside and text:
                yield text
            inside = False
        elif inside:
            lines.append(" ".join(_RESIDUE.sub(" ", line).split()))


# files named like WikiExtractor's output (no suffix), read as such
WIKIEXTRACTOR_NAME = re.compile(r"wiki_\d+")

# file suffix -> its reader (FLORES-200's .dev / .devtest: a sentence per line)
READERS: dict[str, Callable[[Path], Iterator[str]]] = {
    ".txt": _text_documents,
    ".jsonl": _json_documents,
    ".json": _json_documents,
    ".parquet": _parquet_documents,
    ".dev": _line_documents,
    ".devtest": _line_documents,
}


def unsupported(path: Path) -> str:
    """Why `path` cannot be read: its type, and the types that can."""
    return (
        f"{path}: unsupported file type (supported: {', '.join(READERS)}, and WikiExtractor's "
        "wiki_NN files)"
    )


def reader_of(path: Path) -> Callable[[Path], Iterator[str]] | None:
    """The reader of a file: by its suffix, or WikiExtractor's for a `wiki_NN` file."""
    if path.suffix in READERS:
        return READERS[path.suffix]
    if not path.suffix and WIKIEXTRACTOR_NAME.fullmatch(path.name):
        return _wikiextractor_documents
    return None


def iter_file(path: Path) -> Iterator[str]:
    """Documents in one file, one at a time."""
    reader = reader_of(path)
    if reader is None:
        raise UserError(unsupported(path))
    return reader(path)
