"""`hlm bench --only corpus`: the token cache's speed and size, and the memory of pretraining
as the corpus grows.

- tokenisation throughput (MB of text per second, all cores of the machine), the tokenizer's
  batch encoding alone beside it, and the cache's bytes per token and per byte of text, from a
  cold build of the shipped English corpus (`corpus/` under $HLM_DATA_ROOT, about 9 MB);
- the peak RSS of a whole `hlm pretrain` (tokenizer training, tokenisation, a few steps) in a
  fresh process with an empty cache, on the shipped corpus and on 20 copies of it; the goal:
  20x the corpus within 1.2x the memory. A second run over the 20x corpus reads the cache
  (warm). The copies repeat the words, so the tokenizer trainer's word table does not grow
  as it would on 20x new text: the row measures the data pipeline, which is what the cache
  changed (a `list[str]` of the corpus and one tensor of all its ids before).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.bench.timing import Row, check
from zoo.data.cache import ENCODE_BATCH
from zoo.data.corpus import data_root, iter_documents
from zoo.reader import read_bytes, read_mapping
from zoo.tokenizers import encode_documents, load_tokenizer
from zoo.writer import write_bytes

SHIPPED = "corpus"  # the English corpus under $HLM_DATA_ROOT
COPIES = 20
RSS_GOAL = 1.2
_MEASURE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
    "stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
)


def _pretrain_rss_mb(corpus: Path, out: Path, cache: Path, steps: int) -> float:
    """Peak RSS (MB) of `hlm pretrain` over `corpus` in a fresh process."""
    cmd = [
        sys.executable,
        "-c",
        _MEASURE,
        *(sys.executable, "-m", "harness.cli", "pretrain", "-q", "--no-progress"),
        *("--preset", "pythia-tiny", "--objective", "cwt", "--corpus", str(corpus)),
        *("--vocab-size", "4000", "--seq-len", "128", "--batch-size", "8"),
        *("--steps", str(steps), "--eval-batches", "2", "--output-dir", str(out)),
    ]
    env = {**os.environ, "HLM_CACHE_DIR": str(cache)}
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return float(done.stdout.strip().splitlines()[-1])


def _copies(source: Path, folder: Path, n: int) -> Path:
    """`n` copies of every corpus file under `folder` (hard links where the file system allows)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = sorted(f for f in source.rglob("*") if f.suffix == ".txt" and f.is_file())
    for i in range(n):
        for f in files:
            target = folder / f"copy{i:02d}-{f.parent.name}-{f.name}"
            try:
                os.link(f, target)
            except OSError:
                write_bytes(target, read_bytes(f, "a corpus file"))
    return folder


def _cache_meta(cache: Path) -> dict[str, float]:
    metas = [
        read_mapping(p, "a token cache's meta.json") for p in (cache / "tokens").glob("*/meta.json")
    ]
    tokens = sum(sum(p["tokens"] for p in m["parts"].values()) for m in metas)
    text = sum(m["text_bytes"] for m in metas)
    seconds = sum(m["seconds"] for m in metas)
    size = sum(f.stat().st_size for f in (cache / "tokens").rglob("*.bin"))
    return {"tokens": tokens, "text": text, "seconds": seconds, "bytes": size}


def _encoder_mb_per_s(corpus: Path, cache: Path) -> float:
    """MB/s of the tokenizer's batch encoding alone over `corpus` (the cache's tokenizer):
    what bounds the cache build."""
    tokenizer = load_tokenizer(str(next((cache / "tokenizers").glob("*/meta.json")).parent))
    docs = list(iter_documents([str(corpus)]))
    started = time.perf_counter()
    for i in range(0, len(docs), ENCODE_BATCH):
        encode_documents(tokenizer, docs[i : i + ENCODE_BATCH])
    seconds = time.perf_counter() - started
    return sum(len(d.encode("utf-8")) for d in docs) / 1e6 / seconds


def corpus_rows(quick: bool) -> list[Row]:
    """The corpus rows; `quick` trains 2 steps instead of 10."""
    shipped = data_root() / SHIPPED
    steps = 2 if quick else 10
    with tempfile.TemporaryDirectory(prefix="hlm-bench-corpus-") as tmp:
        work = Path(tmp)
        big = _copies(shipped, work / "corpus-x20", COPIES)
        one = _pretrain_rss_mb(shipped, work / "run-1", work / "cache-1", steps)
        meta = _cache_meta(work / "cache-1")
        encoder = _encoder_mb_per_s(shipped, work / "cache-1")
        twenty = _pretrain_rss_mb(big, work / "run-20", work / "cache-20", steps)
        meta20 = _cache_meta(work / "cache-20")
        warm = _pretrain_rss_mb(big, work / "run-20-warm", work / "cache-20", steps)
    cores = os.cpu_count() or 1
    return [
        Row(
            f"tokenisation, shipped corpus ({meta['text'] / 1e6:.1f} MB), {cores} cores",
            meta["text"] / 1e6 / meta["seconds"],
            "MB/s",
        ),
        Row(
            f"tokenisation, {COPIES}x corpus ({meta20['text'] / 1e6:.0f} MB), {cores} cores",
            meta20["text"] / 1e6 / meta20["seconds"],
            "MB/s",
        ),
        Row(f"tokenizer encode_batch alone, shipped corpus, {cores} cores", encoder, "MB/s"),
        Row("token cache: bytes per token", meta["bytes"] / meta["tokens"], "B"),
        Row("token cache: bytes per byte of text", meta["bytes"] / meta["text"], "ratio"),
        Row("hlm pretrain peak RSS, shipped corpus, cold cache", one, "MB"),
        Row(f"hlm pretrain peak RSS, {COPIES}x corpus, cold cache", twenty, "MB"),
        Row(f"hlm pretrain peak RSS, {COPIES}x corpus, warm cache", warm, "MB"),
        check(f"peak RSS {COPIES}x corpus / shipped corpus", twenty / one, "x", "<=", RSS_GOAL),
    ]
