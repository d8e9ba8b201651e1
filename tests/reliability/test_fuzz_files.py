"""The fuzzer's second half: damaged files of every kind a command reads, and folder states.

Generated cases, each a command line run in this process (`hlm`, so a traceback fails):

- corpus files (.txt, .jsonl, .parquet, WikiExtractor's wiki_NN) damaged so that they hold
  no text: `hlm pretrain --corpus` ends with exit 2 naming the file, and writes nothing;
- a checkpoint folder with one file (weights, config, tokenizer, metadata, commit marker)
  truncated, emptied, overwritten or removed, read by `evaluate`, `finetune-causal`,
  `pretrain --init-from` and `publish model`: exit 2 naming the checkpoint or the file, and
  the checkpoint is left as it was;
- output paths that are a file, under a file, too long or empty, for every verb that writes
  one: exit 2 naming the path;
- a leaderboard folder with one of its files damaged (a result, `_cells.json`, a samples
  file), read by `leaderboard`, `report`, `power` and `plot`: the file is named and skipped
  (or the command refuses, naming it), never a traceback, and no file of the folder changes.

`make test` runs every fourth case of each list (and the Hypothesis half at its fast
profile); `make fuzz` (HLM_FUZZ=full) runs them all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.reliability.test_bad_input import FULL, assert_clean_error, hlm

ROOT = Path(__file__).parents[2]


def cases(items: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """All cases under `make fuzz`, every fourth one otherwise."""
    return items if FULL else items[::4]


def snapshot(root: Path) -> dict[Path, str]:
    """Every file under `root` and its content hash."""
    return {
        p: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# --- corpus files ------------------------------------------------------------------------------

Damage = Callable[[Path], None]


def _truncated_parquet(f: Path) -> None:
    pq.write_table(pa.table({"text": ["a b c"] * 50}), f)
    f.write_bytes(f.read_bytes()[:60])


def _parquet(table: pa.Table) -> Damage:
    return lambda f: pq.write_table(table, f)


EMPTY: Damage = lambda f: f.write_bytes(b"")  # noqa: E731
RANDOM: Damage = lambda f: f.write_bytes(os.urandom(3000))  # noqa: E731
CORPUS_DAMAGES: dict[str, dict[str, Damage]] = {
    "c.txt": {"empty": EMPTY, "blank lines": lambda f: f.write_text("\n\n\n")},
    "c.jsonl": {
        "empty": EMPTY,
        "random bytes": RANDOM,
        "not json": lambda f: f.write_text("not json\n"),
        "no text key": lambda f: f.write_text('{"body": "x"}\n'),
        "text not a string": lambda f: f.write_text('{"text": 5}\n'),
        "a list": lambda f: f.write_text('["text"]\n'),
    },
    "c.parquet": {
        "empty": EMPTY,
        "random bytes": RANDOM,
        "truncated": lambda f: _truncated_parquet(f),
        "no text column": _parquet(pa.table({"body": ["a b"]})),
        "ints": _parquet(pa.table({"text": [1, 2]})),
        "nulls only": _parquet(pa.table({"text": pa.array([None, None], pa.string())})),
    },
    "wiki_00": {
        "empty": EMPTY,
        "random bytes": RANDOM,
        "no doc tags": lambda f: f.write_text("plain text\n"),
        "unclosed doc": lambda f: f.write_text('<doc id="1" title="t">\nt\nbody\n'),
    },
}
CORPUS_CASES = [(name, damage) for name, ds in CORPUS_DAMAGES.items() for damage in ds]
PRETRAIN = ["--preset", "pythia-tiny", "--steps", "2", "--batch-size", "2", "--seq-len", "16"]
PRETRAIN += ["--vocab-size", "300", "--no-progress"]


@pytest.mark.parametrize(("name", "damage"), cases(CORPUS_CASES))
def test_a_corpus_file_with_no_text_is_refused(tmp_path: Path, name: str, damage: str) -> None:
    f = tmp_path / "data" / name
    f.parent.mkdir()
    CORPUS_DAMAGES[name][damage](f)
    before = snapshot(tmp_path)
    rc, err = hlm("pretrain", *PRETRAIN, "--corpus", str(f), "--output-dir", str(tmp_path / "o"))
    assert_clean_error(rc, err, name)
    assert snapshot(tmp_path) == before and not (tmp_path / "o").exists()


# --- checkpoint folders ----------------------------------------------------------------------

CKPT_FILES = ["model.safetensors", "config.json", "tokenizer.json", "hlm_metadata.json"]
CKPT_DAMAGES: dict[str, Damage] = {
    "truncated": lambda f: f.write_bytes(f.read_bytes()[: max(1, f.stat().st_size // 3)]),
    "empty": EMPTY,
    "random bytes": RANDOM,
    "removed": lambda f: f.unlink(),
}


def _decoder_for(verb: str, vanilla: Path, headless: Path) -> Path:
    """The checkpoint `verb` takes: causal fine-tuning refuses a vanilla decoder (its trained
    head would be replaced), so it gets a headless one."""
    return headless if verb == "finetune-causal" else vanilla


def _command(verb: str, ckpt: Path, out: Path) -> list[str]:
    return {
        "evaluate": ["evaluate", str(ckpt), "--tasks", "hlm_boolq", "--limit", "1"],
        "finetune-causal": ["finetune-causal", str(ckpt), str(out), "--steps", "1"],
        "init-from": [
            "pretrain",
            *PRETRAIN,
            "--corpus",
            "synthetic:50",
            "--init-from",
            str(ckpt),
            "--output-dir",
            str(out),
        ],
        "publish": ["publish", "model", str(ckpt), "--repo", "me/x", "--output-dir", str(out)],
    }[verb]


CKPT_CASES = [
    (verb, name, damage)
    for verb in ("evaluate", "finetune-causal", "init-from", "publish")
    for name in [*CKPT_FILES, "hlm_commit.json"]
    for damage in CKPT_DAMAGES
    # without a commit marker a folder is a checkpoint from elsewhere, loaded as it is
    if (name, damage) != ("hlm_commit.json", "removed")
]


@pytest.mark.parametrize(("verb", "name", "damage"), cases(CKPT_CASES))
def test_a_damaged_checkpoint_is_refused_and_left_as_it_was(
    tiny_decoder: Path,
    tiny_headless_decoder: Path,
    tmp_path: Path,
    verb: str,
    name: str,
    damage: str,
) -> None:
    ckpt = tmp_path / "ckpt"
    shutil.copytree(_decoder_for(verb, tiny_decoder, tiny_headless_decoder), ckpt)
    CKPT_DAMAGES[damage](ckpt / name)
    before = snapshot(ckpt)
    rc, err = hlm(*_command(verb, ckpt, tmp_path / "out"))
    assert_clean_error(rc, err)
    assert str(ckpt) in err or name in err, err
    assert snapshot(ckpt) == before


# --- output paths ------------------------------------------------------------------------------

OUT_STATES: dict[str, Callable[[Path], str]] = {
    "a file": lambda d: str((d / "f").resolve()),
    "under a file": lambda d: str((d / "f" / "sub").resolve()),
    "too long": lambda d: str(d / ("x" * 300)),
}


def _writer(verb: str, out: str, ckpt: Path, lb: Path) -> list[str]:
    return {
        "pretrain": ["pretrain", *PRETRAIN, "--corpus", "synthetic:50", "--output-dir", out],
        "finetune-causal": ["finetune-causal", str(ckpt), out, "--steps", "1"],
        "publish": ["publish", "model", str(ckpt), "--repo", "me/x", "--output-dir", out],
        "report": ["report", "paper-cpu-decoder", "--leaderboards", str(lb), "--output-dir", out],
        "plot": ["plot", "paper-cpu-decoder", "--leaderboards", str(lb), "--output-dir", out],
    }[verb]


OUT_CASES = [
    (verb, state)
    for verb in ("pretrain", "finetune-causal", "publish", "report", "plot")
    for state in OUT_STATES
]


@pytest.mark.parametrize(("verb", "state"), cases(OUT_CASES))
def test_an_output_path_the_system_refuses_is_named(
    tiny_decoder: Path, tiny_headless_decoder: Path, tmp_path: Path, verb: str, state: str
) -> None:
    (tmp_path / "f").write_text("a file the user keeps\n")
    out = OUT_STATES[state](tmp_path)
    lb = ROOT / "leaderboards"
    ckpt = _decoder_for(verb, tiny_decoder, tiny_headless_decoder)
    rc, err = hlm(*_writer(verb, out, ckpt, lb))
    assert_clean_error(rc, err)
    assert out[:60] in err or "x" * 60 in err, err
    assert (tmp_path / "f").read_text() == "a file the user keeps\n"


def test_an_empty_output_dir_is_refused(tmp_path: Path) -> None:
    rc, err = hlm("pretrain", *PRETRAIN, "--corpus", "synthetic:50", "--output-dir", "")
    assert_clean_error(rc, err, "--output-dir")


# --- leaderboard folders -----------------------------------------------------------------------

LB_DAMAGES: dict[str, Damage] = {"truncated": CKPT_DAMAGES["truncated"], "empty": EMPTY,
                                 "random bytes": RANDOM}  # fmt: skip


def _victim(lb: Path, kind: str) -> Path:
    folder = lb / "paper-cpu-decoder"
    if kind == "result":
        return sorted(folder.glob("*.parquet"))[3]
    if kind == "samples":
        return sorted((folder / "_samples").glob("*.parquet"))[3]
    return folder / "_cells.json"


LB_CASES = [
    (verb, kind, damage)
    for verb in ("leaderboard", "report", "power", "plot")
    for kind in ("result", "samples", "cells")
    for damage in LB_DAMAGES
]


# the files each verb reads: a damaged one it reads is named; one it does not read is no matter
READS = {
    "leaderboard": ("result", "cells"),
    "report": ("result", "samples", "cells"),
    "power": ("result", "cells"),
    "plot": ("result", "samples", "cells"),
}


@pytest.mark.parametrize(("verb", "kind", "damage"), cases(LB_CASES))
def test_a_damaged_leaderboard_file_is_named_never_a_traceback(
    tmp_path: Path, verb: str, kind: str, damage: str
) -> None:
    lb = tmp_path / "lb"
    shutil.copytree(ROOT / "leaderboards" / "paper-cpu-decoder", lb / "paper-cpu-decoder")
    victim = _victim(lb, kind)
    LB_DAMAGES[damage](victim)
    before = snapshot(lb)
    out = {verb: ["--output-dir", str(tmp_path / verb)] for verb in ("report", "plot")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc, err = hlm(verb, "paper-cpu-decoder", "--leaderboards", str(lb),
                      *(out[verb] if verb in out else []))  # fmt: skip
    said = err + "".join(str(w.message) for w in caught)
    assert rc in (0, 2) and "Traceback" not in err, err
    assert kind not in READS[verb] or victim.name in said, said[-2000:]
    assert snapshot(lb) == before
