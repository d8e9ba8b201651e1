"""The on-disk cache: each corpus tokenised once into memory-mapped token streams, and the
tokenizers trained on corpora.

    corpus = training_corpus(["corpus/wikitext-2"], None, None, 0.02, seed=0)
    tokenizer = cached_tokenizer(corpus.train, 8000, "encoder")      # trained once, reused
    train, validation = corpus.streams(tokenizer, "encoder")        # np.memmap token ids

Format: a flat binary file of token ids per part (`main.bin`, `held_out.bin`): every document
followed by the separator (a decoder's end of text, an encoder's [SEP]), as nanoGPT's
`train.bin`, and each part's token counts (`main.counts.npy`: the unigram model baselines
read). Ids are uint16 while the vocabulary fits, else uint32. A numpy memory map over one flat
array makes a block a slice: only the batch in use is read, every process shares the page
cache, and no Arrow index sits between the sampler and the bytes. The sequence length is not
part of the stream: blocks of any length are views over it (`zoo.data.batches.PackedBlocks`),
so a sweep over sequence lengths tokenises the corpus once.

A stream's key hashes the corpus files' contents (`zoo.data.corpus.fingerprint`), the document
limit and hold-out, the tokenizer and the model kind. A folder is written under a temporary
name and renamed when complete; a file lock makes every other process wait for the one
building it. The root is `$HLM_CACHE_DIR` (default `~/.cache/headless-zoo`).

Held-out documents are chosen one at a time from (seed, document index): the split streams,
the same in the tokenizer's training pass and the tokenisation pass.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from filelock import FileLock
from tqdm import tqdm
from transformers import PreTrainedTokenizerBase

from zoo.data.batches import token_stream
from zoo.data.corpus import UNVERSIONED, fingerprint, iter_documents, local_bytes, local_files
from zoo.errors import UserError
from zoo.reader import check_regular, open_regular, read_mapping
from zoo.tokenizers import load_tokenizer, train_tokenizer

log = logging.getLogger(__name__)

CACHE_ENV = "HLM_CACHE_DIR"
FORMAT = 2  # bump when the stream layout changes (2: unigram counts per part)
ENCODE_BATCH = 1000  # documents per call into the Rust tokenizer (which runs them in parallel)
Part = Literal["main", "held_out"]
_MASK = (1 << 64) - 1


def cache_root() -> Path:
    """$HLM_CACHE_DIR, else $XDG_CACHE_HOME/headless-zoo, else ~/.cache/headless-zoo."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "headless-zoo"


def is_held_out(index: int, seed: int, fraction: float) -> bool:
    """Whether document `index` is held out: a uniform draw from (seed, index) (splitmix64)
    below `fraction`. Streaming and deterministic."""
    x = (seed * 0x9E3779B97F4A7C15 + index + 1) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    x ^= x >> 31
    return x / 2.0**64 < fraction


@dataclass(frozen=True)
class CorpusSpec:
    """A list of sources, its first `max_documents` documents, and the `held_out` fraction of
    them set aside (by `seed`) as the `held_out` part; without one, every document is `main`."""

    sources: tuple[str, ...]
    max_documents: int | None = None
    held_out: float | None = None
    seed: int = 0

    def parts(self) -> Iterator[tuple[Part, str]]:
        """(part, document) of every document up to the limit, streamed."""
        for i, doc in enumerate(iter_documents(list(self.sources))):
            if self.max_documents is not None and i >= self.max_documents:
                return
            held = self.held_out is not None and is_held_out(i, self.seed, self.held_out)
            yield ("held_out" if held else "main"), doc

    def documents(self, part: Part) -> Iterator[str]:
        """The part's documents, streamed."""
        return (doc for p, doc in self.parts() if p == part)

    def identity(self) -> dict[str, Any]:
        """What the corpus's cache keys hash: contents, not paths."""
        return {**asdict(self), "sources": fingerprint(list(self.sources))}

    def describe(self) -> str:
        return ", ".join(self.sources)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:24]


def tokenizer_digest(tokenizer: PreTrainedTokenizerBase) -> str:
    """A hash of everything that decides the ids: the fast tokenizer's full serialisation
    (model, normaliser, pre-tokeniser, added tokens), else the vocabulary."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = (
        backend.to_str()
        if backend is not None
        else json.dumps(sorted(tokenizer.get_vocab().items()))
    )
    return hashlib.sha256(f"{type(tokenizer).__name__}\n{text}".encode()).hexdigest()


def _remove_dead_builds(folder: Path) -> None:
    """Temporary folders a killed builder of `folder` left (the caller holds its lock)."""
    for tmp in folder.parent.glob(f".tmp-{folder.name}-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def _locked_build(folder: Path, build: Any) -> Path:
    """`folder`, built by `build(tmp)` under a file lock unless another process has."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if (folder / "meta.json").is_file():
            return folder
        _remove_dead_builds(folder)
        tmp = folder.parent / f".tmp-{folder.name}-pid{os.getpid()}"
        tmp.mkdir()
        try:
            build(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        os.rename(tmp, folder)
    return folder


def cached_tokenizer(corpus: CorpusSpec, vocab_size: int, kind: str) -> PreTrainedTokenizerBase:
    """The tokenizer trained (from an iterator over the `main` documents) on `corpus`: trained
    once per corpus contents, size and kind, then read back by every run and process."""
    import tokenizers

    key = _digest(
        ["tokenizer", FORMAT, corpus.identity(), vocab_size, kind, tokenizers.__version__]
    )
    folder = cache_root() / "tokenizers" / key

    def build(tmp: Path) -> None:
        counted = _Counted(corpus.documents("main"))
        started = time.perf_counter()
        tokenizer = train_tokenizer(counted, vocab_size, kind)
        if counted.n == 0:
            raise UserError(f"corpus {corpus.describe()} holds no documents")
        tokenizer.save_pretrained(tmp)
        meta = {"corpus": corpus.identity(), "vocab_size": vocab_size, "kind": kind}
        meta |= {"documents": counted.n, "seconds": round(time.perf_counter() - started, 3)}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))

    return load_tokenizer(str(_locked_build(folder, build)))


class _Counted:
    """An iterator that counts what it yields."""

    def __init__(self, items: Iterator[str]) -> None:
        self.items, self.n = items, 0

    def __iter__(self) -> Iterator[str]:
        for item in self.items:
            self.n += 1
            yield item


@dataclass(frozen=True)
class TokenStreams:
    """A built cache folder: its parts as read-only memory maps, and what the build recorded."""

    folder: Path
    meta: dict[str, Any]

    def counts(self, name: Part) -> np.ndarray:
        """How often each token id occurs in the part: [V] int64."""
        with open_regular(self.folder / f"{name}.counts.npy", "a token cache's counts") as f:
            return np.asarray(np.load(f))

    def part(self, name: Part) -> np.ndarray:
        """The part's token ids (1-D memory map; empty when it holds no token)."""
        info = self.meta["parts"][name]
        dtype = np.dtype(self.meta["dtype"])
        if info["tokens"] == 0:
            return np.empty(0, dtype=dtype)
        path = self.folder / f"{name}.bin"
        check_regular(path, "a token cache part")  # a FIFO or device is never mapped
        return np.memmap(path, dtype=dtype, mode="r")


def token_streams(
    corpus: CorpusSpec, tokenizer: PreTrainedTokenizerBase, kind: str, progress: bool = False
) -> TokenStreams:
    """The corpus tokenised by `tokenizer` for a `kind` model: built once, then reused."""
    key = _digest(["tokens", FORMAT, corpus.identity(), tokenizer_digest(tokenizer), kind])
    folder = cache_root() / "tokens" / key

    def build(tmp: Path) -> None:
        _build_streams(tmp, corpus, tokenizer, kind, progress, folder)

    built = _locked_build(folder, build)
    problem = _streams_problem(built)
    if problem is not None:  # truncated or damaged since it was built: made again, once
        log.warning("token cache %s: %s; building it again", built, problem)
        shutil.rmtree(built)
        built = _locked_build(folder, build)
        problem = _streams_problem(built)
        if problem is not None:
            raise UserError(f"token cache {built}: {problem}")
    return TokenStreams(built, read_mapping(built / "meta.json", "a token cache's meta.json"))


def _streams_problem(folder: Path) -> str | None:
    """Why a built token cache does not hold what its meta.json says (a part's file of
    another size than its token count: truncated, say), or None."""
    try:
        meta = read_mapping(folder / "meta.json", "a token cache's meta.json")
        itemsize = np.dtype(meta["dtype"]).itemsize
        for name, info in meta["parts"].items():
            f = folder / f"{name}.bin"
            want = int(info["tokens"]) * itemsize
            have = f.stat().st_size if f.is_file() else 0
            if have != want:
                return f"{f.name} holds {have} bytes, its {info['tokens']} tokens need {want}"
    except (OSError, ValueError, KeyError, TypeError, UserError) as exc:
        return f"meta.json does not read ({exc})"
    return None


def _bar(corpus: CorpusSpec, progress: bool) -> tqdm:
    total = local_bytes(list(corpus.sources)) if corpus.max_documents is None else None
    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        disable=None if progress else True,  # None: no bar where stderr is no terminal (a log)
        desc=f"tokenising {corpus.describe()}"[:60],
        leave=None,  # under `hlm run`'s bar: gone once done
    )


def _build_streams(
    tmp: Path,
    corpus: CorpusSpec,
    tokenizer: PreTrainedTokenizerBase,
    kind: str,
    progress: bool,
    final: Path,
) -> None:
    """Tokenise the corpus into `tmp/main.bin` (and `held_out.bin`), count each part's token
    ids (`main.counts.npy`: a unigram model, for baselines), and write `meta.json`; `tmp`
    becomes the cache entry `final` once complete."""
    vocab = len(tokenizer)
    dtype = np.dtype(np.uint16 if vocab <= 1 << 16 else np.uint32)
    parts: dict[str, dict[str, int]] = {
        p: {"documents": 0, "tokens": 0} for p in ("main", "held_out")
    }
    counts = {p: np.zeros(vocab, dtype=np.int64) for p in parts}
    started, text_bytes = time.perf_counter(), 0
    files = {p: (tmp / f"{p}.bin").open("wb") for p in parts}
    with _bar(corpus, progress) as bar:
        for part, docs in _batched_parts(corpus):
            ids = token_stream(docs, tokenizer, kind)  # documents joined by the separator
            ids.astype(dtype).tofile(files[part])
            counts[part] += np.bincount(ids, minlength=vocab)[:vocab]
            size = sum(len(d.encode("utf-8")) for d in docs)
            text_bytes += size
            parts[part]["documents"] += len(docs)
            parts[part]["tokens"] += len(ids)
            bar.update(size)
    for f in files.values():
        f.close()
    _check_parts(corpus, parts)
    for name, c in counts.items():
        np.save(tmp / f"{name}.counts.npy", c)
    seconds = time.perf_counter() - started
    meta = {
        "format": FORMAT,
        "corpus": corpus.identity(),
        "tokenizer": tokenizer_digest(tokenizer),
        "kind": kind,
        "dtype": dtype.name,
        "parts": parts,
        "text_bytes": text_bytes,
        "seconds": round(seconds, 3),
        "built_by": {"host": socket.gethostname(), "pid": os.getpid()},
    }
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    log.info(
        "token cache: %s tokenised, %d tokens in %.1f s (%.2f MB/s) -> %s",
        corpus.describe(),
        parts["main"]["tokens"] + parts["held_out"]["tokens"],
        seconds,
        text_bytes / 1e6 / max(seconds, 1e-9),
        final,
    )


def _batched_parts(corpus: CorpusSpec) -> Iterator[tuple[Part, list[str]]]:
    """(part, documents) in batches of up to ENCODE_BATCH documents of one part."""
    batches: dict[Part, list[str]] = {"main": [], "held_out": []}
    for part, doc in corpus.parts():
        batches[part].append(doc)
        if len(batches[part]) == ENCODE_BATCH:
            yield part, batches[part]
            batches[part] = []
    for part, docs in batches.items():
        if docs:
            yield part, docs


def _check_parts(corpus: CorpusSpec, parts: dict[str, dict[str, int]]) -> None:
    main, held = parts["main"]["documents"], parts["held_out"]["documents"]
    if main + held == 0:
        raise UserError(f"corpus {corpus.describe()} holds no documents")
    if corpus.held_out is None:
        return
    if held == 0 or main == 0:
        raise UserError(
            f"corpus {corpus.describe()}: {main + held} documents, {held} of them held out at "
            f"validation_fraction {corpus.held_out}: too few to hold out a validation set "
            "(raise validation_fraction, add documents, or give validation sources)"
        )


@dataclass(frozen=True)
class TrainingCorpus:
    """The training text and where its validation text comes from: separate sources, or the
    part held out of the training sources."""

    train: CorpusSpec
    validation: CorpusSpec | None = None

    def streams(
        self, tokenizer: PreTrainedTokenizerBase, kind: str, progress: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """(training token ids, validation token ids), memory-mapped from the cache."""
        train = token_streams(self.train, tokenizer, kind, progress)
        if self.validation is None:
            return train.part("main"), train.part("held_out")
        held = token_streams(self.validation, tokenizer, kind, progress)
        return train.part("main"), held.part("main")

    def contents(self) -> str | None:
        """A digest of the training and validation text's contents (their files' checksums,
        the Hub revision, the synthetic generator's version), which a checkpoint records so
        that text edited since is noticed; None where a Hub revision cannot be read."""
        parts = [self.train.identity()]
        if self.validation is not None:
            parts.append(self.validation.identity())
        if any(fp.endswith(f"#{UNVERSIONED}") for part in parts for fp in part["sources"]):
            return None
        return _digest(parts)


def _no_shared_files(corpus: list[str], validation: list[str]) -> None:
    """Validation text no run trains on: a local file in both lists is refused."""
    train = {f.resolve() for s in corpus for f in local_files(s)}
    shared = sorted(f for s in validation for f in local_files(s) if f.resolve() in train)
    if shared:
        raise UserError(
            f"validation: {shared[0]} is also in the training corpus"
            + (f" ({len(shared)} such files)" if len(shared) > 1 else "")
            + ": hold out whole files, e.g. corpus: [enwiki/AA] with validation: "
            "[enwiki/AB/wiki_52]"
        )


def training_corpus(
    corpus: list[str],
    validation: list[str] | None,
    max_documents: int | None,
    validation_fraction: float,
    seed: int,
) -> TrainingCorpus:
    """The validation sources where given, else a held-out `validation_fraction` of the
    (first `max_documents`) corpus documents."""
    if validation:
        _no_shared_files(corpus, validation)
        return TrainingCorpus(
            CorpusSpec(tuple(corpus), max_documents), CorpusSpec(tuple(validation))
        )
    return TrainingCorpus(CorpusSpec(tuple(corpus), max_documents, validation_fraction, seed))
