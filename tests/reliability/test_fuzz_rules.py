"""The fuzzer's generators for the four rules of the trust boundary (docs/RELIABILITY.md):

1. one writer: names built from data, and links, FIFOs, devices and folders placed where
   each writer writes: refused or kept inside, never followed, the victim unchanged;
2. one reader: deep, lying, non-finite, mistyped or non-regular JSON in every file a
   checkpoint, a run or a leaderboard holds: a `UserError` naming the file, never another;
3. every verb's arguments: hostile values for every flag of every verb: exit 0 or 2, one
   line, never a traceback nor an internal error (exit 3);
4. bounded work and nothing non-finite: huge dimensions, non-finite counters.

`make test` runs every fourth case of each list; `make fuzz` (HLM_FUZZ=full) runs them all.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.cli.verbs import VERBS
from tests.reliability.test_bad_input import FULL, hlm
from zoo.checkpoint_files import check_model_config, check_tokenizer_files
from zoo.errors import UserError
from zoo.reader import read_json
from zoo.train.atomic import checkpoint_problem
from zoo.train.metadata import read_metadata
from zoo.train.safe_load import read_state
from zoo.writer import WriteRefused, component, inside, write_text


def cases(items: list) -> list:
    """All cases under `make fuzz`, every fourth one otherwise."""
    return items if FULL else items[::4]


# --- rule 1: one writer ----------------------------------------------------------------------

HOSTILE_NAMES = [
    "",
    ".",
    "..",
    "../x",
    "x/../../y",
    "/abs",
    "a/b",
    "a\\b",
    "nul\0x",
    "x" * 256,
    "é" * 130,
    "../" * 40 + "etc",
    "x/" * 10,
]
NAMES_FROM_DATA = ["metric", "task", "model", "suite", "cell id", "plugin file", "result id"]


@pytest.mark.parametrize(
    ("name", "what"), cases(list(itertools.product(HOSTILE_NAMES, NAMES_FROM_DATA)))
)
def test_a_name_from_data_never_leaves_its_root(tmp_path: Path, name: str, what: str) -> None:
    with pytest.raises(WriteRefused, match=f"{what} .* cannot name a file"):
        inside(tmp_path, name, what=what)
    assert list(tmp_path.iterdir()) == []


def _link(target: Path, victim: Path) -> None:
    target.symlink_to(victim)


def _fifo(target: Path, victim: Path) -> None:
    os.mkfifo(target)


def _folder(target: Path, victim: Path) -> None:
    target.mkdir()


def _device(target: Path, victim: Path) -> None:
    target.symlink_to(os.devnull)


def _dangling(target: Path, victim: Path) -> None:
    target.symlink_to(victim.parent / "nowhere")


PLACED: dict[str, Callable[[Path, Path], None]] = {
    "a link to a user's file": _link,
    "a FIFO": _fifo,
    "a folder": _folder,
    "a link to a device": _device,
    "a dangling link": _dangling,
}
# every file a verb writes, by the name it writes it under
WRITTEN = [
    "_suite.yaml",
    "_cells.json",
    "report.html",
    "curves-validation-val_ppl.png",
    "config.yaml",
    "resolved.yaml",
    "hlm_metadata.json",
    "training_state.json",
    "lm_eval_results.json",
    "REPRODUCTION.md",
    "verdicts.svg",
    "README.md",
    "x.parquet",
]


@pytest.mark.parametrize(
    ("placed", "name"), cases(list(itertools.product(sorted(PLACED), WRITTEN)))
)
def test_nothing_is_written_through_or_over_what_is_placed(
    tmp_path: Path, placed: str, name: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own")
    target = tmp_path / name
    PLACED[placed](target, victim)
    with pytest.raises(WriteRefused, match=f"{name}: "):
        write_text(target, "new")
    assert victim.read_text() == "the user's own"
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("name", cases(HOSTILE_NAMES))
def test_component_refuses_what_is_not_one(name: str) -> None:
    with pytest.raises(WriteRefused):
        component(name, "name")


# --- rule 2: one reader -----------------------------------------------------------------------


def _deep(depth: int) -> str:
    return "{" + '"a":[' * depth + "1" + "]" * depth + "}"


HOSTILE_JSON = {
    "nested 100 deep": _deep(100),
    "nested 100000 deep": _deep(100_000),
    "NaN": '{"tokens_seen": NaN}',
    "Infinity": '{"flops": Infinity}',
    "-Infinity": '{"loss": -Infinity}',
    "1e400": '{"x": 1e400}',
    "a list": "[1, 2, 3]",
    "a string": '"config"',
    "null": "null",
    "truncated": '{"a": [1, 2',
    "not UTF-8": b'{"a": "\xff\xfe"}',
    "empty": "",
    "a NUL": '{"a": "\x00"}\x00',
}
HOSTILE_KINDS = ["a FIFO", "a link loop", "a link to a device", "a folder"]


def _read_config(folder: Path) -> object:
    return check_model_config(folder)


def _read_tokenizer(folder: Path) -> object:
    check_tokenizer_files(folder)
    return None


def _read_tokenizer_config(folder: Path) -> object:
    check_tokenizer_files(folder)
    return None


def _read_metadata(folder: Path) -> object:
    return read_metadata(folder)


def _read_state(folder: Path) -> object:
    return read_state(folder)


def _read_results(folder: Path) -> object:
    return read_json(folder / "lm_eval_results.json")


def _read_cells(folder: Path) -> object:
    from harness.results.leaderboard import current_cells

    return current_cells(folder)


READERS: dict[str, Callable[[Path], object]] = {
    "config.json": _read_config,
    "tokenizer.json": _read_tokenizer,
    "tokenizer_config.json": _read_tokenizer_config,
    "hlm_metadata.json": _read_metadata,
    "training_state.json": _read_state,
    "lm_eval_results.json": _read_results,
    "_cells.json": _read_cells,
}


def _plant(folder: Path, name: str, content: str | bytes) -> None:
    data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    (folder / name).write_bytes(data)


@pytest.mark.parametrize(
    ("name", "content"), cases(list(itertools.product(sorted(READERS), sorted(HOSTILE_JSON))))
)
def test_hostile_json_is_a_named_user_error(tmp_path: Path, name: str, content: str) -> None:
    _plant(tmp_path, name, HOSTILE_JSON[content])
    try:
        READERS[name](tmp_path)
    except UserError as exc:
        assert name in str(exc), str(exc)
    # a value the reader takes must be one its type allows (a list of cells, a mapping)


@pytest.mark.parametrize(
    ("name", "kind"), cases(list(itertools.product(sorted(READERS), HOSTILE_KINDS)))
)
def test_a_non_regular_file_is_never_read(tmp_path: Path, name: str, kind: str) -> None:
    target = tmp_path / name
    if kind == "a FIFO":
        os.mkfifo(target)
    elif kind == "a link loop":
        target.symlink_to(target)
    elif kind == "a link to a device":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    with pytest.raises(UserError, match=name):
        READERS[name](tmp_path)


MARKERS = [
    "not json",
    _deep(100_000),
    '{"files": NaN}',
    '{"files": {"../x": {"bytes": 1, "sha256": "0"}}}',
    '{"files": []}',
]


@pytest.mark.parametrize("marker", cases(MARKERS))
def test_a_lying_commit_marker_is_a_problem_not_a_traceback(tmp_path: Path, marker: str) -> None:
    (tmp_path / "hlm_commit.json").write_text(marker)
    assert checkpoint_problem(tmp_path) is not None


HUGE = {
    "num_hidden_layers": [0, -1, 10**6, 2**63, 1.5, "2", None, True],
    "hidden_size": [0, -64, "64", 10**7, 64.0, [64]],
    "num_attention_heads": [0, 3, -2, "4", 2**40],
    "vocab_size": [0, 1, -5, 10**12, "300"],
    "max_position_embeddings": [0, 1, 7, 10**12],
    "intermediate_size": [0, -1, 10**9],
    "bos_token_id": [-1, 10**9, "0"],
    "pad_token_id": [-1, 10**9],
}
BASE_CONFIG = {
    "model_type": "gpt_neox",
    "vocab_size": 400,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "max_position_embeddings": 128,
}


@pytest.mark.parametrize(("field", "value"), cases([(f, v) for f, vs in HUGE.items() for v in vs]))
def test_a_model_config_out_of_range_is_refused_before_building(
    tmp_path: Path, field: str, value: object
) -> None:
    (tmp_path / "config.json").write_text(json.dumps({**BASE_CONFIG, field: value}))
    with pytest.raises(UserError, match=r"config.json: "):
        check_model_config(tmp_path)


SCHEDULER = {  # a LambdaLR's state_dict, as a checkpoint holds it
    "base_lrs": [1e-3],
    "last_epoch": 3,
    "_step_count": 4,
    "_is_initial": False,
    "_get_lr_called_within_step": False,
    "_last_lr": [5e-4],
    "lr_lambdas": [None],
}
GOOD_STATE = {
    "scheduler": SCHEDULER,
    "step": 3,
    "tokens_seen": 96,
    "flops": 1.0,
    "wall_seconds": 2.0,
}
BAD_STATES = [
    '{"step": 3, "tokens_seen": NaN}',
    '{"step": 3, "flops": Infinity}',
    '{"step": 3, "tokens_seen": 1e400}',
    '{"step": NaN}',
    *(json.dumps({k: v for k, v in GOOD_STATE.items() if k != gone}) for gone in GOOD_STATE),
    *(json.dumps({**GOOD_STATE, k: -1}) for k in ("step", "tokens_seen", "flops", "wall_seconds")),
    json.dumps({**GOOD_STATE, "scheduler": []}),
    json.dumps({**GOOD_STATE, "step": "3"}),
]


@pytest.mark.parametrize("state", cases(BAD_STATES))
def test_a_training_state_that_lies_never_reads(tmp_path: Path, state: str) -> None:
    """Non-finite counters, a missing scheduler or counter, a negative or mistyped one."""
    (tmp_path / "training_state.json").write_text(state)
    with pytest.raises(UserError, match=r"training_state\.json: "):
        read_state(tmp_path)
    (tmp_path / "training_state.json").write_text(json.dumps(GOOD_STATE))
    assert read_state(tmp_path)["step"] == 3


# --- rule 3: every verb's arguments -----------------------------------------------------------

HOSTILE_VALUES = [
    "",
    " ",
    "\x00",
    "nan",
    "inf",
    "-1",
    "0",
    "1e400",
    str(2**70),
    "../..",
    "~nosuchuser/x",
]
# each verb's positional arguments: harmless values that name nothing, so that a flag's value
# is what is tried
POSITIONALS = {
    "finetune-causal": ["nowhere/final", "nowhere-out"],
    "validate": ["nowhere.yaml"],
    "run": ["nowhere"],
    "leaderboard": ["nowhere"],
    "plot": ["nowhere"],
    "report": ["nowhere"],
    "power": ["nowhere"],
    "publish": ["leaderboard", "nowhere"],
    "evaluate": ["nowhere/final"],
}
SKIP = {"--help", "-h", "--version"}
NOT_RUN = {"--dry-run"}  # flags that would compute when their value is accepted


def _value_flags(verb: str) -> list[str]:
    """Every flag of `verb` that takes a value."""
    parser = build_parser(verb)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = []
    for action in sub.choices[verb]._actions:
        if action.option_strings and action.nargs != 0 and not set(action.option_strings) & SKIP:
            flags.append(max(action.option_strings, key=len))
    return sorted(set(flags))


VERB_FLAGS = [
    (verb, flag)
    for verb in VERBS
    if verb not in ("bench", "pretrain", "ls")  # bench measures; pretrain's flags: test_bad_input
    for flag in _value_flags(verb)
]


@pytest.mark.parametrize(
    ("verb", "flag", "value"),
    cases([(v, f, x) for (v, f), x in itertools.product(VERB_FLAGS, HOSTILE_VALUES)]),
)
def test_every_flag_of_every_verb_takes_a_hostile_value_cleanly(
    tmp_path: Path, monkeypatch, verb: str, flag: str, value: str
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing the command writes lands in the project
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    root = (
        ["--leaderboards", "lb"]
        if flag != "--leaderboards" and (verb, "--leaderboards") in VERB_FLAGS
        else []
    )
    rc, err = hlm(verb, *POSITIONALS.get(verb, []), f"{flag}={value}", *root)
    assert rc in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


HOSTILE_ROWS = {
    "config not JSON": {"config": "{not json"},
    "config a list": {"config": "[1]"},
    "config nested past reason": {"config": "[" * 100_000 + "]" * 100_000},
    "no model": {"model": None},
    "an empty model": {"model": ""},
    "value 1e308": {"value": 1e308},
    "value -1e308": {"value": -1e308},
    "value NaN": {"value": float("nan")},
    "value inf": {"value": float("inf")},
    "value null": {"value": None},
}


@pytest.mark.parametrize(
    ("edit", "verb"),
    cases(list(itertools.product(sorted(HOSTILE_ROWS), ["leaderboard", "power", "plot"]))),
)
def test_a_result_file_whose_rows_lie_is_named_and_skipped(
    tmp_path: Path, edit: str, verb: str
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.results.leaderboard import read_cell_file, write_cell
    from harness.results.schema import SCHEMA
    from tests.harness.results.test_leaderboard import row

    board = tmp_path / "s"
    write_cell(board, "good", [row("m", "accuracy", 0.5), row("b", "accuracy", 0.4)])
    (first,) = read_cell_file(board / "good.parquet").to_pylist()[:1]
    bad = {**first, "cell_id": "bad", "model": "x", "seed": 1, **HOSTILE_ROWS[edit]}
    pq.write_table(pa.Table.from_pylist([bad], schema=SCHEMA), board / "bad.parquet")
    extra = ["--baseline", "b"] if verb == "power" else []
    with pytest.warns(UserWarning, match=r"bad\.parquet: skipped, row 0: "):
        rc, err = hlm(verb, "s", "--leaderboards", str(tmp_path), *extra)
    assert rc == 0 and "Traceback" not in err, err


@pytest.mark.parametrize("verb", [["validate"], ["run", "--dry-run"], ["pretrain", "--config"]])
def test_a_fifo_where_a_yaml_file_goes_is_named_never_read(tmp_path: Path, verb: list[str]) -> None:
    """A FIFO would block its reader forever; a device would never end."""
    fifo = tmp_path / "s.yaml"
    os.mkfifo(fifo)
    rc, err = hlm(*verb, str(fifo))
    assert rc == 2 and f"{fifo}: not a regular file" in err, err
