"""English Wikipedia as WikiExtractor writes it (`enwiki/`): articles split on `<doc>` tags, the
markup residue cleaned, and validation files that no run trains on."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoo.data.cache import training_corpus
from zoo.data.corpus import iter_documents, resolve_local
from zoo.errors import UserError

WIKI = """<doc id="12" url="http://en.wikipedia.org/wiki?curid=12" title="Anarchism">
Anarchism

Anarchism is a political philosophy formula_3 with {{cite web}} roots.</dl>
History.
The <b>term</b> codice_2 is old.
</doc>
<doc id="25" url="http://en.wikipedia.org/wiki?curid=25" title="Autism">
Autism

Autism is a disorder.
</doc>
"""


def _tree(tmp_path: Path) -> Path:
    for part in ("AA/wiki_00", "AA/wiki_01", "AB/wiki_00"):
        f = tmp_path / "enwiki" / part
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(WIKI)
    return tmp_path / "enwiki"


def test_articles_are_split_on_doc_tags_and_cleaned(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    docs = list(iter_documents([str(root / "AA" / "wiki_00")]))
    assert docs == [
        "Anarchism\nAnarchism is a political philosophy with roots.\nHistory.\nThe term is old.",
        "Autism\nAutism is a disorder.",
    ]
    assert len(resolve_local(str(root))) == 3  # a folder of wiki_NN files reads as a corpus


def test_validation_files_are_never_trained_on(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with pytest.raises(UserError, match="also in the training corpus"):
        training_corpus([str(root)], [str(root / "AB" / "wiki_00")], None, 0.0, 0)
    held_out = training_corpus([str(root / "AA")], [str(root / "AB" / "wiki_00")], None, 0.0, 0)
    assert held_out.validation is not None
