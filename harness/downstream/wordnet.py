"""WordNet synonym pairs from the database files (`wndb(5WN)` format).

    pairs = synonym_pairs(Path("../shared/data/wordnet"))   # [("big", "large"), ...]

Reads `data.{noun,verb,adj,adv}` as Debian's `wordnet-base` installs them and as NLTK's
`wordnet` corpus ships them (the same files): after the licence header (lines starting with
two spaces), each line is `offset lex_filenum ss_type w_cnt word lex_id [word lex_id ...]
...`, with `w_cnt` in hexadecimal; the words of one line (a synset) are synonyms. Multi-word
lemmas (joined by `_`) and adjective markers (`(a)`, `(p)`, `(ip)`) are dropped or removed.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from zoo.checksums import contents_digest
from zoo.errors import UserError
from zoo.reader import MAX_BYTES, read_text

POS = ("noun", "verb", "adj", "adv")
_MARKER = re.compile(r"\((?:a|p|ip)\)$")


def synset_words(line: str) -> list[str]:
    """The single-word lemmas of one `data.POS` line, lower-cased, in order, without repeats."""
    fields = line.split()
    count = int(fields[3], 16)
    words = [_MARKER.sub("", fields[4 + 2 * i]).lower() for i in range(count)]
    return list(dict.fromkeys(w for w in words if w and "_" not in w))


def read_synsets(folder: Path, pos: tuple[str, ...] = POS) -> list[list[str]]:
    """Every synset of the given parts of speech with at least two single-word lemmas."""
    synsets = []
    for p in pos:
        f = folder / f"data.{p}"
        if not f.is_file():
            raise UserError(
                f"{f}: not found (a WordNet 3.0 database folder: data.noun, data.verb, ...)"
            )
        synsets += _file_synsets(f)
    return synsets


def _file_synsets(f: Path) -> list[list[str]]:
    """The synsets of one data file with at least two single-word lemmas."""
    lines = read_text(f, "a WordNet file", MAX_BYTES, encoding="latin-1").splitlines()
    synsets = [synset_words(line) for line in lines if line and not line.startswith("  ")]
    return [words for words in synsets if len(words) >= 2]


def synsets_digest(f: Path) -> str | None:
    """The first 16 hex digits of the sha256 of the synsets data file `f` gives: what the
    synonyms task reads of it, which a trimmed copy keeps (`tools/trim_wordnet.py`); None
    where `f` is not there. Read once a process while its size and mtime stay the same."""
    return contents_digest(f, _synsets_json) if f.is_file() else None


def _synsets_json(f: Path) -> str:
    return json.dumps(_file_synsets(f), ensure_ascii=False)


def synonym_pairs(folder: Path, pos: tuple[str, ...] = POS) -> list[tuple[str, str]]:
    """Distinct unordered synonym pairs (a, b) with a < b, sorted."""
    pairs = {
        (a, b) if a < b else (b, a)
        for words in read_synsets(folder, pos)
        for a, b in itertools.combinations(words, 2)
    }
    return sorted(pairs)
