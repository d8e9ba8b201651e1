from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoTokenizer

from zoo.data.batches import IGNORE, BatchSampler, MaskingConfig, clm_labels, mlm_mask, pack
from zoo.data.cache import training_corpus
from zoo.data.corpus import (
    HUB,
    LOCAL,
    SYNTHETIC,
    iter_documents,
    local_bytes,
    local_files,
    source_kind,
    source_problem,
)
from zoo.data.readers import iter_file
from zoo.data.synthetic import synthetic_corpus
from zoo.errors import UserError
from zoo.tokenizers import load_tokenizer, special_ids, train_tokenizer


def test_synthetic_corpus_is_deterministic_and_structured() -> None:
    a, b = synthetic_corpus(50, seed=3), synthetic_corpus(50, seed=3)
    assert a == b and a != synthetic_corpus(50, seed=4)
    words = " ".join(a).lower().replace(".", "").split()
    # determiner-noun agreement: "lo" (plural) phrases end in a noun with the plural "-i"
    assert words.count("ka") > 100 and words.count("lo") > 50


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_tokenizer_round_trip(tmp_path, kind: str) -> None:
    docs = synthetic_corpus(200)
    tok = train_tokenizer(docs, 600, kind)
    assert len(tok) <= 600
    tok.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(tmp_path)
    text = docs[0]
    ids = again(text, add_special_tokens=False)["input_ids"]
    assert ids == tok(text, add_special_tokens=False)["input_ids"]
    decoded = again.decode(ids)
    assert decoded == (text.lower() if kind == "encoder" else text)
    special_ids(again, kind)


def test_load_tokenizer_errors_name_the_path(tmp_path) -> None:
    """A file where a folder is meant, a folder without a tokenizer, and a tokenizer that lacks
    a token the pipeline needs: each a UserError that says which."""
    file = tmp_path / "tokenizer.json"
    file.write_text("{}")
    with pytest.raises(UserError, match=rf"tokenizer: {file} is a file; give the folder"):
        load_tokenizer(str(file))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match=rf"cannot load tokenizer '{empty}'"):
        load_tokenizer(str(empty))
    decoder = train_tokenizer(synthetic_corpus(50), 400, "decoder")
    decoder.save_pretrained(tmp_path / "dec")
    with pytest.raises(UserError, match="tokenizer has no cls token, which encoders need"):
        special_ids(load_tokenizer(str(tmp_path / "dec")), "encoder")


def test_vocab_smaller_than_specials_is_a_user_error() -> None:
    with pytest.raises(UserError, match="too small"):
        train_tokenizer(["a b c"], 5, "encoder")
    with pytest.raises(UserError, match="256 bytes"):
        train_tokenizer(["a b c"], 100, "decoder")


def test_pack_encoder_and_decoder() -> None:
    docs = synthetic_corpus(100)
    for kind in ("encoder", "decoder"):
        tok = train_tokenizer(docs, 500, kind)
        ids = special_ids(tok, kind)
        blocks = pack(docs, tok, 32, kind)
        assert blocks.shape[1] == 32 and blocks.dtype == torch.long
        if kind == "encoder":
            assert (blocks[:, 0] == ids["cls"]).all() and (blocks[:, -1] == ids["sep"]).all()
        else:
            assert (blocks == ids["eos"]).any()  # documents separated by EOS
    with pytest.raises(UserError, match="corpus too small"):
        pack(["tiny"], tok, 512, "decoder")


def test_mlm_masking_rates_and_determinism() -> None:
    ids = torch.randint(10, 1000, (64, 128))
    ids[:, 0] = 2
    cfg = MaskingConfig()
    m1, l1 = mlm_mask(ids, [0, 2, 3, 4], 1000, 4, cfg, torch.Generator().manual_seed(0))
    m2, l2 = mlm_mask(ids, [0, 2, 3, 4], 1000, 4, cfg, torch.Generator().manual_seed(0))
    assert torch.equal(m1, m2) and torch.equal(l1, l2)
    sel = l1 != IGNORE
    assert abs(sel.float().mean().item() - 0.15) < 0.01
    assert not sel[:, 0].any()  # special tokens never selected
    assert torch.equal(l1[sel], ids[sel])
    frac_mask = (m1[sel] == 4).float().mean().item()
    frac_same = (m1[sel] == ids[sel]).float().mean().item()
    assert abs(frac_mask - 0.8) < 0.03 and 0.07 < frac_same < 0.13
    assert not (m1[~sel] != ids[~sel]).any()


def test_clm_labels_shift() -> None:
    ids = torch.arange(10).view(2, 5)
    lab = clm_labels(ids)
    assert lab[0].tolist() == [1, 2, 3, 4, IGNORE]


def test_batch_sampler_is_a_permutation_per_epoch() -> None:
    s = BatchSampler(10, seed=1)
    first = s.indices(0, 10)
    assert sorted(first.tolist()) == list(range(10))
    assert torch.equal(BatchSampler(10, seed=1).indices(3, 4), first[3:7])


def test_real_corpus_files(data_root) -> None:
    docs = list(iter_file(data_root / "corpus/nltk_gutenberg/chesterton-ball.txt"))  # latin-1 bytes
    assert len(docs) > 100
    assert len(list(iter_documents(["corpus/wikitext-2/valid.txt"]))) > 100


def test_flores_sentence_files_are_a_document_per_line(data_root) -> None:
    """The paper's multilingual corpus as shipped: FLORES-200's .dev / .devtest files."""
    path = data_root / "flores200/dev/eng_Latn.dev"
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    docs = list(iter_file(path))
    assert docs == [x.strip() for x in lines] and len(docs) > 900
    assert source_problem("flores200/devtest/*.devtest") is None


def test_a_file_of_no_known_type_is_refused_before_reading(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("fine\n")
    (tmp_path / "b.docx").write_text("not read\n")
    problem = source_problem(str(tmp_path / "*"))
    assert problem is not None and "b.docx: unsupported file type" in problem
    with pytest.raises(UserError, match=r"b\.docx: unsupported file type"):
        list(iter_documents([str(tmp_path / "*")]))


def test_jsonl_and_missing_sources(tmp_path) -> None:
    good = tmp_path / "c.jsonl"
    good.write_text(json.dumps({"text": "hello"}) + "\n" + json.dumps({"text": "world"}) + "\n")
    assert list(iter_documents([str(good)])) == ["hello", "world"]
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"txt": 1}\n')
    with pytest.raises(UserError, match=r"b.jsonl:1: expected an object with a 'text'"):
        list(iter_documents([str(bad)]))
    with pytest.raises(UserError, match="no file matches"):
        list(iter_documents([str(tmp_path / "nope*.txt")]))


def test_unreadable_corpus_files_are_refused_by_file_and_line(tmp_path) -> None:
    """A JSON line that does not parse, a Parquet file without a text column, with numbers
    in it, or that is no Parquet at all: each a UserError naming the file (and the line)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps({"text": "fine"}) + "\n\n{text: oops}\n")
    with pytest.raises(UserError, match=r"b.jsonl:3: not a JSON line \(Expecting property"):
        list(iter_documents([str(bad)]))
    pq.write_table(pa.table({"body": ["a"], "id": [1]}), tmp_path / "cols.parquet")
    with pytest.raises(UserError, match=r"cols.parquet: no 'text' column \(columns: body, id\)"):
        list(iter_documents([str(tmp_path / "cols.parquet")]))
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "ints.parquet")
    with pytest.raises(UserError, match=r"ints.parquet: the 'text' column holds int64, not"):
        list(iter_documents([str(tmp_path / "ints.parquet")]))
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(UserError, match=r"junk.parquet: not a readable Parquet file"):
        list(iter_documents([str(tmp_path / "junk.parquet")]))


def test_a_local_file_named_synthetic_is_a_file_everywhere(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    src = "synthetic_notes.txt"  # a relative path that starts like the generator's name
    (tmp_path / src).write_text("one\n\ntwo\n")
    assert source_kind(src) is LOCAL
    assert source_kind("synthetic:10") is SYNTHETIC and source_kind("hub:org/set") is HUB
    assert list(iter_documents([src])) == ["one", "two"]
    assert local_bytes([src]) == (tmp_path / src).stat().st_size
    assert local_bytes([src, "synthetic:10"]) is None
    assert len(local_files(src)) == 1 and local_files("synthetic") == []
    with pytest.raises(UserError, match=f"{src} is also in the training corpus: hold out"):
        training_corpus([src], [src], None, 0.0, 0)  # validation text no run trains on
    (tmp_path / "b.txt").write_text("three\n")
    with pytest.raises(UserError, match=r"training corpus \(2 such files\): hold out"):
        training_corpus([src, "b.txt"], ["b.txt", src], None, 0.0, 0)
