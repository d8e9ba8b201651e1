"""Every bad input gets a clean error: exit status 2, the file or flag and the key named, no
traceback, nothing written.

The first tests are the known cases, one by one. The fuzzer then draws, seeded (`derandomize`),
25 cases a test under `make test` and 200 under `make fuzz`: pretraining configs (a bad value at
one or two keys, or damaged YAML text), `hlm pretrain` flags, and suites (every section, through
`hlm validate` and `hlm run`). Bad values come from `tests.reliability.bad_values`, which reads
what each field declares, never what the validator accepts.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from harness.cli import main
from harness.suite import RECIPE_KEYS
from harness.suite.schema import SAFE_NAME, Suite, TaskEntry
from tests.harness.conftest import TINY
from tests.reliability.bad_values import NAME, bad_value, checked_fields
from zoo.objectives import LossOptions
from zoo.train.config import PretrainConfig
from zoo.train.finetune_settings import CausalFinetuneConfig

# `make fuzz` (HLM_FUZZ=full) draws 200 cases a test; `make test` 25, the same first ones
FULL = os.environ.get("HLM_FUZZ", "") == "full"
FUZZ = settings(
    max_examples=200 if FULL else 25,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
)


def hlm(*argv: str) -> tuple[int, str]:
    """`hlm ARGV` in this process: (exit status, standard error). Any exception other than the
    exit itself escapes, so a traceback fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(list(argv))
        except SystemExit as exc:  # argparse's own errors
            rc = int(exc.code or 0)
    return rc, err.getvalue()


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def assert_clean_error(rc: int, err: str, *names: str) -> None:
    assert rc == 2, err
    assert "Traceback" not in err, err
    for name in names:
        assert name in err, (name, err)


# --- pretraining configs --------------------------------------------------------------------

BASE_CONFIG = {
    "preset": "pythia-tiny",
    "steps": 2,
    "batch_size": 2,
    "seq_len": 16,
    "vocab_size": 300,
    "corpus": ["synthetic:50"],
    "progress": False,
}


def pretrain_config(d: Path, text: str) -> tuple[int, str]:
    """`hlm pretrain --config` of `text` (bytes allowed via latin-1 escapes elsewhere)."""
    f = d / "c.yaml"
    f.write_text(text)
    before = files_under(d)
    rc, err = hlm("pretrain", "--config", str(f))
    assert files_under(d) == before, "a refused config wrote files"
    return rc, err


def config_text(d: Path, **changes: Any) -> str:
    return yaml.safe_dump({**BASE_CONFIG, "output_dir": str(d / "out"), **changes})


ISSUE_CONFIG_CASES = {
    "steps: -1": ("steps", -1),
    "vocab_size: 0": ("vocab_size", 0),
    "vocab_size: 3": ("vocab_size", 3),
    "huge vocab_size": ("vocab_size", 10**11),
    "huge steps": ("steps", 10**14),
    "batch_size: -4": ("batch_size", -4),
    "huge batch_size": ("batch_size", 10**11),
    "mlm_probability: 1.0": ("mlm_probability", 1.0),
    "lr: -1": ("lr", -1),
    "lr: .nan": ("lr", float("nan")),
    "lr: .inf": ("lr", float("inf")),
    "temperature: 0": ("loss", {"temperature": 0}),
    "log_every: 0": ("log_every", 0),
    "max_documents: 0": ("max_documents", 0),
    "seq_len: 100000": ("seq_len", 100000),
    "warmup_steps: -3": ("warmup_steps", -3),
    "eval_batches: 0": ("eval_batches", 0),
    "grad_clip: -1": ("grad_clip", -1),
    "eps: .inf": ("eps", float("inf")),
    "betas: [2, 0.9]": ("betas", [2, 0.9]),
    "save_at_steps: [-5]": ("save_at_steps", [-5]),
    "seed: 2^64": ("seed", 2**64),
}


@pytest.mark.parametrize("case", list(ISSUE_CONFIG_CASES))
def test_each_known_bad_config_value_is_refused_with_file_and_key(case: str) -> None:
    key, value = ISSUE_CONFIG_CASES[case]
    with workdir() as d:
        rc, err = pretrain_config(d, config_text(d, **{key: value}))
        assert_clean_error(rc, err, str(d / "c.yaml"), f": {key}")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("preset: pythia-tiny\n\xff\xfe junk\n", "not UTF-8 text"),
        (
            "preset: pythia-tiny\nsteps: 2\nsteps: 5\n",
            "line 3: invalid YAML (duplicate key 'steps'",
        ),
        ("\x00\x01\x02binary", "invalid YAML"),
        ("- a list\n", "expected a mapping of config keys"),
        ("preset: [unclosed\n", "invalid YAML"),
    ],
)
def test_damaged_config_text_is_refused_with_the_file(text: str, says: str) -> None:
    with workdir() as d:
        f = d / "c.yaml"
        f.write_bytes(text.encode("latin-1"))
        rc, err = hlm("pretrain", "--config", str(f))
        assert_clean_error(rc, err, str(f), says)
        assert files_under(d) == {f}


def test_duplicate_keys_are_refused_in_suites_too(tmp_path: Path) -> None:
    text = TINY.read_text() + "seeds: [3]\n"  # the file already sets seeds
    f = tmp_path / "s.yaml"
    f.write_text(text)
    rc, err = hlm("validate", str(f))
    assert_clean_error(rc, err, str(f), "duplicate key 'seeds'")


# --- fuzzed configs ---------------------------------------------------------------------------

CONFIG_KEYS = checked_fields(PretrainConfig)


@st.composite
def bad_config_changes(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(CONFIG_KEYS), min_size=1, max_size=2, unique=True))
    return {k: draw(bad_value(PretrainConfig, k)) for k in keys}


@FUZZ
@given(changes=bad_config_changes())
def test_fuzzed_config_values_are_refused(changes: dict[str, Any]) -> None:
    with workdir() as d:
        rc, err = pretrain_config(d, config_text(d, **changes))
        assert_clean_error(rc, err, str(d / "c.yaml"))
        assert any(f": {k}" in err for k in changes), err


@dataclass(frozen=True)
class TextDamage:
    """A change to a YAML file's text, and what the error must say."""

    name: str
    says: str

    def apply(self, text: str, data: Any) -> str:
        if self.name == "not utf-8":
            return text[: len(text) // 2] + "\udcff" + text[len(text) // 2 :]
        if self.name == "duplicate key":
            return text + f"{data}: 1\n"
        if self.name == "unclosed bracket":
            return text + f"{data}: [1, 2\n"
        if self.name == "tab indentation":
            return text + f"nested:\n\t{data}: 1\n"
        return f"- {data}\n"  # a list, not a mapping


TEXT_DAMAGES = [
    TextDamage("not utf-8", "not UTF-8 text"),
    TextDamage("duplicate key", "duplicate key"),
    TextDamage("unclosed bracket", "invalid YAML"),
    TextDamage("tab indentation", "invalid YAML"),
    TextDamage("a list", "expected a mapping"),
]


def write_damaged(f: Path, text: str) -> None:
    f.write_bytes(text.encode("utf-8", errors="surrogateescape"))


@FUZZ
@given(damage=st.sampled_from(TEXT_DAMAGES), key=st.sampled_from(sorted(BASE_CONFIG)))
def test_fuzzed_config_text_damage_is_refused(damage: TextDamage, key: str) -> None:
    with workdir() as d:
        f = d / "c.yaml"
        write_damaged(f, damage.apply(config_text(d), key))
        rc, err = hlm("pretrain", "--config", str(f))
        assert_clean_error(rc, err, str(f), damage.says)
        assert files_under(d) == {f}


# --- fuzzed flags -----------------------------------------------------------------------------

FLAG_FIELDS = [(PretrainConfig, k) for k in CONFIG_KEYS if k != "loss"] + [
    (LossOptions, k) for k in checked_fields(LossOptions)
]


def as_flag(model: type[BaseModel], name: str, value: Any) -> list[str]:
    """The command-line words that pass `value` to the flag of `model.name`."""
    flag = "--" + name.replace("_", "-")
    if model.model_fields[name].annotation is bool or value == []:
        return [f"{flag}={value}"]  # a switch takes no word; an empty list none either
    if isinstance(value, list) and all(not isinstance(v, list | dict) for v in value):
        return [flag, *map(str, value)]
    return [flag, str(value)]


@st.composite
def bad_flags(draw: st.DrawFn) -> tuple[str, list[str]]:
    model, name = draw(st.sampled_from(FLAG_FIELDS))
    return name, as_flag(model, name, draw(bad_value(model, name)))


@FUZZ
@given(flag=bad_flags())
def test_fuzzed_flags_are_refused(flag: tuple[str, list[str]]) -> None:
    name, argv = flag
    with workdir() as d:
        base = ["--preset", "pythia-tiny", "--steps", "2", "--batch-size", "2", "--seq-len", "16"]
        rc, err = hlm("pretrain", *base, "--output-dir", str(d / "out"), "--no-progress", *argv)
        assert_clean_error(rc, err)
        assert argv[0].split("=")[0] in err or name in err, (argv, err)
        assert files_under(d) == set()


# --- fuzzed suites ----------------------------------------------------------------------------

UNSAFE_NAMES = st.one_of(
    st.sampled_from(["../../escaped", "", "a/b", ".hidden", "a b", "/abs", "-dash"]),
    st.text(min_size=0, max_size=10).filter(lambda v: re.fullmatch(SAFE_NAME, v) is None),
)
SUITE_RECIPE_KEYS = checked_fields(PretrainConfig, [k for k in RECIPE_KEYS if k != "loss"])


@dataclass(frozen=True)
class SuiteChange:
    """Set `value` at the key `path` of a suite mapping; the error must name `path`."""

    path: tuple[str | int, ...]
    value: Any

    def named(self) -> str:
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
        return out.split(".__key__")[0]

    def apply(self, data: dict[str, Any]) -> dict[str, Any]:
        node: Any = data
        for p in self.path[:-1]:
            node = node.setdefault(p, {}) if isinstance(p, str) else node[p]
        node[self.path[-1]] = self.value
        return data


def _at(path: tuple[str | int, ...], values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return values.map(lambda v: SuiteChange(path, v))


def _recipe_change(prefix: tuple[str | int, ...]) -> st.SearchStrategy[SuiteChange]:
    return st.sampled_from(SUITE_RECIPE_KEYS).flatmap(
        lambda k: _at((*prefix, k), bad_value(PretrainConfig, k))
    )


def _sweep_change() -> st.SearchStrategy[SuiteChange]:
    bad_list = st.sampled_from(SUITE_RECIPE_KEYS).flatmap(
        lambda k: _at(("sweep", k), bad_value(PretrainConfig, k).map(lambda v: [v]))
    )
    return st.one_of(
        bad_list,
        _at(("sweep", "output_dir"), st.just(["x"])),  # not sweepable
        _at(("sweep", "steps"), st.just([])),
    )


def _model_change(i: int) -> st.SearchStrategy[SuiteChange]:
    finetune = st.sampled_from(checked_fields(CausalFinetuneConfig)).flatmap(
        lambda k: _at(("models", i, "finetune", k), bad_value(CausalFinetuneConfig, k))
    )
    return st.one_of(
        _recipe_change(("models", i, "recipe")),
        _at(("models", i, "preset"), NAME.filter(lambda v: v not in ("bert-tiny",))),
        _at(("models", i, "objective"), NAME.filter(lambda v: v not in ("ce", "cwt"))),
        _at(("models", i, "name"), UNSAFE_NAMES),
        finetune,
    )


def _task_change(t: int) -> st.SearchStrategy[SuiteChange]:
    return st.one_of(
        _at(("tasks", t, "type"), NAME.filter(lambda v: v not in ("validation", "throughput"))),
        _at(("tasks", t, "params", "not_a_param"), st.integers()),
        *(
            _at(("tasks", t, k), bad_value(TaskEntry, k))
            for k in checked_fields(TaskEntry, ["every", "at", "metrics"])
        ),
    )


SUITE_CHANGES = st.one_of(
    _at(("name",), UNSAFE_NAMES),
    _recipe_change(("recipe",)),
    st.integers(0, 1).flatmap(_model_change),
    st.integers(0, 1).flatmap(_task_change),
    _sweep_change(),
    *(_at((k,), bad_value(Suite, k)) for k in ("seeds", "compare_at", "version", "models")),
)


def _check_suite(d: Path, f: Path, *names: str) -> None:
    rc, err = hlm("validate", str(f))
    assert_clean_error(rc, err, str(f), *names)
    lb, runs = d / "leaderboards", d / "runs"
    rc, err = hlm("run", str(f), "--leaderboards", str(lb), "--no-progress")
    assert_clean_error(rc, err, str(f), *names)
    assert not lb.exists() and not runs.exists(), "a refused suite wrote files"


@FUZZ
@given(change=SUITE_CHANGES)
def test_fuzzed_suites_are_refused_by_validate_and_run(
    change: SuiteChange, monkeypatch: pytest.MonkeyPatch
) -> None:
    with workdir() as d:
        monkeypatch.setenv("HLM_RUNS_DIR", str(d / "runs"))
        f = d / "s.yaml"
        f.write_text(yaml.safe_dump(change.apply(yaml.safe_load(TINY.read_text()))))
        _check_suite(d, f, change.named())


@FUZZ
@given(damage=st.sampled_from(TEXT_DAMAGES), key=st.sampled_from(["name", "seeds", "recipe"]))
def test_fuzzed_suite_text_damage_is_refused(
    damage: TextDamage, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with workdir() as d:
        monkeypatch.setenv("HLM_RUNS_DIR", str(d / "runs"))
        f = d / "s.yaml"
        write_damaged(f, damage.apply(TINY.read_text(), key))
        _check_suite(d, f, damage.says)


@pytest.mark.parametrize("name", ["../../escaped", "", "a/b", ".hidden"])
def test_a_suite_name_is_never_a_path(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HLM_RUNS_DIR", str(tmp_path / "runs"))
    data = {**yaml.safe_load(TINY.read_text()), "name": name}
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    f = nested / "s.yaml"
    f.write_text(yaml.safe_dump(data))
    _check_suite(nested, f, "name: String should match pattern")
    assert {p.name for p in tmp_path.rglob("*")} == {"a", "b", "s.yaml"}
