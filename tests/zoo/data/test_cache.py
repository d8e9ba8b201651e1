"""The token cache (`zoo.data.cache`) and the streaming corpus readers (`zoo.data.corpus`,
`zoo.data.readers`)."""

from __future__ import annotations

import multiprocessing as mp
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from zoo.data import cache as cache_module
from zoo.data.batches import PackedBlocks, pack
from zoo.data.cache import (
    CorpusSpec,
    cached_tokenizer,
    is_held_out,
    token_streams,
    training_corpus,
)
from zoo.data.corpus import fingerprint, iter_documents
from zoo.data.readers import iter_file
from zoo.data.synthetic import synthetic_corpus
from zoo.errors import UserError
from zoo.tokenizers import special_ids, train_tokenizer


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HLM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _write_docs(path: Path, docs: list[str]) -> Path:
    path.write_text("\n\n".join(docs) + "\n")
    return path


def test_text_files_stream_as_they_were_split(data_root) -> None:
    """Streaming by lines finds the documents the whole-file regex split found (latin-1 too)."""
    for name in ("nltk_gutenberg/chesterton-ball.txt", "wikitext-2/valid.txt"):
        path = data_root / "corpus" / name
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        expected = [d.strip() for d in re.split(r"\n\s*\n", text) if d.strip()]
        assert list(iter_file(path)) == expected


def test_parquet_streams_in_batches(tmp_path) -> None:
    docs = [f"document {i}" for i in range(2500)]
    pq.write_table(pa.table({"text": docs, "id": list(range(2500))}), tmp_path / "c.parquet")
    assert list(iter_documents([str(tmp_path / "c.parquet")])) == docs


def test_hub_sources_stream(tmp_path, monkeypatch) -> None:
    """A `hub:` source is read with streaming=True (here a local dataset folder, offline)."""
    import datasets

    folder = tmp_path / "ds"
    folder.mkdir()
    pq.write_table(pa.table({"text": ["one", "", "two"]}), folder / "train.parquet")
    calls = []
    real = datasets.load_dataset

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", spy)
    assert list(iter_documents([f"hub:{folder}"])) == ["one", "two"]
    assert calls and calls[0]["streaming"] is True


def test_a_hub_source_without_text_names_its_columns(tmp_path) -> None:
    folder = tmp_path / "ds"
    folder.mkdir()
    pq.write_table(pa.table({"sentence": ["one"], "label": [0]}), folder / "train.parquet")
    with pytest.raises(UserError, match=r"has no 'text' column \(sentence, label\)"):
        list(iter_documents([f"hub:{folder}"]))


def test_a_local_hub_folder_is_fingerprinted_by_its_files(tmp_path) -> None:
    """A local dataset folder read as `hub:` is keyed by its files' contents, as a local
    corpus is, so an edited file builds a new token cache instead of reusing the old one."""
    folder = tmp_path / "ds"
    folder.mkdir()
    pq.write_table(pa.table({"text": ["one", "two"]}), folder / "train.parquet")
    before = fingerprint([f"hub:{folder}"])
    assert before == fingerprint([f"hub:{folder}"]) and before[0] != "unversioned"
    pq.write_table(pa.table({"text": ["one", "three"]}), folder / "train.parquet")
    assert fingerprint([f"hub:{folder}"]) != before


def test_cached_stream_blocks_equal_in_memory_packing(tmp_path, cache_dir) -> None:
    docs = synthetic_corpus(120)
    corpus = _write_docs(tmp_path / "c.txt", docs)
    for kind in ("encoder", "decoder"):
        tok = train_tokenizer(docs, 500, kind)
        streams = token_streams(CorpusSpec((str(corpus),)), tok, kind)
        stream = streams.part("main")
        assert isinstance(stream, np.memmap) and stream.dtype == np.uint16
        assert (streams.counts("main") == np.bincount(stream, minlength=len(tok))).all()
        blocks = PackedBlocks(stream, 32, kind, special_ids(tok, kind))
        expected = pack(docs, tok, 32, kind)
        assert len(blocks) == len(expected)
        assert torch.equal(blocks[:], expected)
        idx = torch.tensor([5, 0, len(expected) - 1])
        assert torch.equal(blocks[idx], expected[idx])


def test_the_cache_is_built_once_and_keyed_by_contents(tmp_path, cache_dir, monkeypatch) -> None:
    docs = synthetic_corpus(60)
    corpus = _write_docs(tmp_path / "c.txt", docs)
    tok = train_tokenizer(docs, 400, "decoder")
    builds = []
    real = cache_module._build_streams
    monkeypatch.setattr(cache_module, "_build_streams", lambda *a: builds.append(a[1]) or real(*a))
    first = token_streams(CorpusSpec((str(corpus),)), tok, "decoder")
    again = token_streams(CorpusSpec((str(corpus),)), tok, "decoder")
    assert first.folder == again.folder and len(builds) == 1
    moved = tmp_path / "b.txt"
    shutil.copyfile(corpus, moved)  # same contents elsewhere: the same cache
    assert token_streams(CorpusSpec((str(moved),)), tok, "decoder").folder == first.folder
    _write_docs(moved, docs[:-1])  # other contents: another
    assert token_streams(CorpusSpec((str(moved),)), tok, "decoder").folder != first.folder
    other_tok = train_tokenizer(docs, 420, "decoder")
    assert token_streams(CorpusSpec((str(corpus),)), other_tok, "decoder").folder != first.folder
    assert len(builds) == 3
    assert not list(cache_dir.glob("tokens/.tmp-*"))


def test_hold_out_is_streaming_deterministic_and_disjoint(tmp_path, cache_dir) -> None:
    docs = [f"doc number {i}" + " word" * (i % 7) for i in range(400)]
    corpus = _write_docs(tmp_path / "c.txt", docs)
    spec = CorpusSpec((str(corpus),), held_out=0.1, seed=3)
    main, held = list(spec.documents("main")), list(spec.documents("held_out"))
    assert sorted(main + held) == sorted(docs) and not set(main) & set(held)
    assert 20 <= len(held) <= 60  # about 10% of 400
    assert held == [d for i, d in enumerate(docs) if is_held_out(i, 3, 0.1)]
    assert list(CorpusSpec((str(corpus),), held_out=0.1, seed=4).documents("held_out")) != held
    tok = train_tokenizer(docs, 400, "decoder")
    streams = token_streams(spec, tok, "decoder")
    assert streams.meta["parts"]["held_out"]["documents"] == len(held)
    limited = CorpusSpec((str(corpus),), max_documents=50, held_out=0.1, seed=3)
    assert (
        sum(1 for _ in limited.documents("main")) + sum(1 for _ in limited.documents("held_out"))
        == 50
    )


def test_the_tokenizer_trains_on_the_training_documents_only(
    tmp_path, cache_dir, monkeypatch
) -> None:
    docs = synthetic_corpus(80)
    corpus = _write_docs(tmp_path / "c.txt", docs)
    seen: list[str] = []
    real = cache_module.train_tokenizer

    def spy(texts, vocab_size, kind):
        assert not isinstance(texts, list)  # an iterator, never the corpus in a list
        return real((seen.append(t) or t for t in texts), vocab_size, kind)

    monkeypatch.setattr(cache_module, "train_tokenizer", spy)
    spec = CorpusSpec((str(corpus),), held_out=0.2, seed=0)
    tok = cached_tokenizer(spec, 500, "encoder")
    assert seen == list(spec.documents("main"))
    seen.clear()
    again = cached_tokenizer(spec, 500, "encoder")  # read back: no training
    assert seen == [] and again.get_vocab() == tok.get_vocab()


def test_too_few_documents_to_hold_out_is_a_user_error(tmp_path, cache_dir) -> None:
    corpus = _write_docs(tmp_path / "c.txt", ["only one document here"] * 1)
    tok = train_tokenizer(synthetic_corpus(30), 300, "decoder")
    text = training_corpus([str(corpus)], None, None, 0.02, seed=0)
    with pytest.raises(UserError, match=r"c.txt: 1 documents, 0 of them held out"):
        text.streams(tok, "decoder")
    assert not list(cache_dir.glob("tokens/*/meta.json"))  # nothing half-made is kept


def _worker(corpus: str, cache: str, queue) -> None:  # pragma: no cover - in a subprocess
    import os

    os.environ["HLM_CACHE_DIR"] = cache
    tok = train_tokenizer(synthetic_corpus(200), 500, "decoder")
    streams = token_streams(CorpusSpec((corpus,)), tok, "decoder")
    queue.put((str(streams.folder), streams.meta["built_by"]))


def test_two_processes_share_one_build(tmp_path) -> None:
    corpus = _write_docs(tmp_path / "c.txt", synthetic_corpus(3000))
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(str(corpus), str(tmp_path / "cache"), queue))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert results[0] == results[1]  # one folder, built by one of them, read by the other
    assert len(list((tmp_path / "cache" / "tokens").glob("*/meta.json"))) == 1


def test_a_killed_build_leaves_nothing_that_is_read(tmp_path, cache_dir, monkeypatch) -> None:
    docs = synthetic_corpus(60)
    corpus = _write_docs(tmp_path / "c.txt", docs)
    tok = train_tokenizer(docs, 400, "decoder")

    def interrupted(*args):
        (args[0] / "main.bin").write_bytes(b"\0\0")
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_module, "_build_streams", interrupted)
    with pytest.raises(KeyboardInterrupt):
        token_streams(CorpusSpec((str(corpus),)), tok, "decoder")
    monkeypatch.undo()
    assert not list(cache_dir.glob("tokens/*/meta.json"))
    assert not list(cache_dir.glob("tokens/.tmp-*"))
    built = token_streams(CorpusSpec((str(corpus),)), tok, "decoder").folder
    shutil.rmtree(built)  # as if a SIGKILLed builder had left its temporary folder
    dead = built.parent / f".tmp-{built.name}-pid999999"
    dead.mkdir()
    (dead / "main.bin").write_bytes(b"\0")
    again = token_streams(CorpusSpec((str(corpus),)), tok, "decoder")
    assert again.folder == built and not dead.exists()
    assert again.meta["parts"]["main"]["tokens"] > 0


def test_pretraining_runs_share_the_cache(tmp_path, cache_dir) -> None:
    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    corpus = _write_docs(tmp_path / "c.txt", synthetic_corpus(400))
    for name, seq_len in (("a", 32), ("b", 64)):  # another sequence length: the same stream
        pretrain(
            PretrainConfig(
                preset="pythia-tiny",
                objective="cwt",
                output_dir=str(tmp_path / name),
                corpus=[str(corpus)],
                vocab_size=400,
                steps=1,
                batch_size=4,
                seq_len=seq_len,
                eval_batches=1,
                progress=False,
            )
        )
    assert len(list(cache_dir.glob("tokens/*/meta.json"))) == 1
    assert len(list(cache_dir.glob("tokenizers/*/meta.json"))) == 1


def test_the_training_texts_contents_change_with_its_files_and_are_unknown_offline(
    tmp_path, monkeypatch
) -> None:
    """What a checkpoint records of its text: the same for the same files, another for an
    edited file (training or validation), none where a Hub revision cannot be read."""
    train = _write_docs(tmp_path / "train.txt", ["one two", "three four"])
    held = _write_docs(tmp_path / "held.txt", ["five six"])
    text = training_corpus([str(train)], [str(held)], None, 0.0, 0)
    before = text.contents()
    assert before is not None and before == text.contents()
    _write_docs(held, ["five seven"])
    assert text.contents() not in (before, None)
    _write_docs(held, ["five six"])
    assert text.contents() == before  # the contents, not the file's time
    monkeypatch.setattr("zoo.data.corpus._hub_revision", lambda spec: "unversioned")
    assert training_corpus(["hub:someone/data"], None, None, 0.1, 0).contents() is None


def test_a_hub_revision_is_asked_once_a_process(monkeypatch) -> None:
    """A run's stream key and the text its checkpoint records read one revision, and an
    offline machine warns once, not at every read."""
    from zoo.data import corpus

    asked: list[str] = []

    class Offline:
        def dataset_info(self, name: str, revision: str | None = None) -> None:
            asked.append(name)
            raise OSError("offline")

    monkeypatch.setattr("huggingface_hub.HfApi", Offline)
    corpus._remote_revision.cache_clear()
    try:
        first, again = fingerprint(["hub:someone/data"]), fingerprint(["hub:someone/data"])
    finally:
        corpus._remote_revision.cache_clear()
    assert first == again == ["hub:someone/data#unversioned"] and asked == ["someone/data"]


def test_a_hub_source_pins_its_revision(monkeypatch) -> None:
    """`#REVISION` reaches load_dataset; a full commit id keys the stream without asking the
    Hub, a tag or branch is asked for its commit; malformed pins are refused by source."""
    import datasets

    from zoo.data import corpus

    asked: list[tuple[str, str | None]] = []

    class Hub:
        def dataset_info(self, name: str, revision: str | None = None) -> object:
            asked.append((name, revision))
            return type("Info", (), {"sha": "f" * 40})()

    loaded: list[dict[str, object]] = []
    monkeypatch.setattr("huggingface_hub.HfApi", Hub)
    monkeypatch.setattr(
        datasets, "load_dataset", lambda *a, **kw: loaded.append(kw) or iter([{"text": "x"}])
    )
    commit = "0123456789abcdef0123456789abcdef01234567"
    corpus._remote_revision.cache_clear()
    try:
        pinned = fingerprint([f"hub:org/set:cfg@train#{commit}"])
        assert asked == [] and pinned == [f"hub:org/set:cfg@train#{commit}#{commit}"]
        assert fingerprint(["hub:org/set#v1.0"]) == [f"hub:org/set#v1.0#{'f' * 40}"]
        assert asked == [("org/set", "v1.0")]
    finally:
        corpus._remote_revision.cache_clear()
    assert list(iter_documents([f"hub:org/set:cfg@train#{commit}"])) == ["x"]
    assert loaded[-1]["revision"] == commit and loaded[-1]["split"] == "train"
    assert list(iter_documents(["hub:org/set"])) == ["x"] and loaded[-1]["revision"] is None
    assert corpus.hub_dataset(f"hub:org/set:cfg@train#{commit}") == "org/set"


def test_a_malformed_hub_pin_is_refused(tmp_path) -> None:
    from zoo.data.corpus import source_problem

    folder = tmp_path / "ds"
    folder.mkdir()
    assert "an empty revision" in str(source_problem("hub:org/set#"))
    assert "expected hub:NAME" in str(source_problem("hub:#abc"))
    assert "expected hub:NAME" in str(source_problem("hub:"))
    assert "local dataset folder, with no revision" in str(source_problem(f"hub:{folder}#abc"))
    assert source_problem(f"hub:{folder}") is None and source_problem("hub:org/set#v1") is None


def test_the_build_log_names_the_cache_entry_not_its_temporary_folder(
    tmp_path, cache_dir, caplog
) -> None:
    docs = synthetic_corpus(40)
    corpus = _write_docs(tmp_path / "c.txt", docs)
    tok = train_tokenizer(docs, 400, "decoder")
    with caplog.at_level("INFO", logger="zoo.data.cache"):
        built = token_streams(CorpusSpec((str(corpus),)), tok, "decoder").folder
    said = [r.getMessage() for r in caplog.records if "tokenised" in r.getMessage()]
    assert len(said) == 1 and said[0].endswith(f"-> {built}"), said


@pytest.mark.parametrize("terminal", [True, False])
def test_the_tokenising_bar_shows_on_a_terminal_only(monkeypatch, terminal: bool) -> None:
    """A log file gets the cache's INFO line alone, never the bar's carriage returns."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    bar = cache_module._bar(CorpusSpec(("synthetic:10",)), progress=True)
    bar.update(1)
    bar.close()
    assert ("tokenising" in err.getvalue()) is terminal
    assert cache_module._bar(CorpusSpec(("synthetic:10",)), progress=False).disable
