"""tools/trim_wordnet.py: WordNet's data files cut to what the synonyms task reads give the same
synonym pairs as the files themselves, in a fraction of the bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.downstream.wordnet import read_synsets, synonym_pairs
from tests.conftest import load_tool

trim_wordnet = load_tool("trim_wordnet")

LINE = (
    "00001740 03 n 02 entity 0 thing 1 003 ~ 00001930 n 0000 ~ 00002137 n 0000 "
    "| that which is perceived or known or inferred to have its own distinct existence"
)


def test_a_synset_line_keeps_its_head_and_words_and_nothing_after() -> None:
    assert trim_wordnet.trim_line(LINE) == "00001740 03 n 02 entity 0 thing 1"
    header = "  1 This software and database is being provided to you, the LICENSEE, by  "
    assert trim_wordnet.trim_line(header) == header


def test_the_trimmed_folder_gives_the_real_files_synonym_pairs(
    tmp_path: Path, data_root: Path
) -> None:
    source = data_root / "wordnet"
    written = trim_wordnet.trim(source, tmp_path / "wordnet")
    assert {f.name for f in written} == {
        "data.noun",
        "data.verb",
        "data.adj",
        "data.adv",
        "LICENSE",
    }
    assert read_synsets(tmp_path / "wordnet") == read_synsets(source)
    assert synonym_pairs(tmp_path / "wordnet") == synonym_pairs(source)
    size = sum(f.stat().st_size for f in written)
    assert size < 0.4 * sum((source / f.name).stat().st_size for f in written)


def test_a_folder_without_the_data_files_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"data\.noun: not found"):
        trim_wordnet.trim(tmp_path, tmp_path / "out")
