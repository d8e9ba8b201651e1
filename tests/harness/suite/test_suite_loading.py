"""Suite loading and validation: every shipped suite, every kind of mistake, and a fuzzer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main as hlm
from harness.run.runner import expand
from harness.suite import SuiteError, last_suite, load_suite, resolve_suite_path
from tests.harness.conftest import TINY

SUITES = sorted((Path(__file__).parents[3] / "suites").glob("*.yaml"))


def test_suites_are_shipped() -> None:
    names = {p.stem for p in SUITES}
    assert {"quickstart", "throughput", "vocab-sweep", "batch-sweep", "ablation"} <= names
    assert {"glue", "superglue", "xnli", "lambada", "zeroshot", "paper-cpu-encoder"} <= names


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.stem)
def test_every_shipped_suite_validates(path: Path, data_root) -> None:
    suite = load_suite(path)
    assert suite.name == path.stem
    assert expand(suite)


def write(tmp_path: Path, data: dict, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data))
    return p


def base() -> dict:
    return yaml.safe_load(TINY.read_text())


def problems(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as err:
        load_suite(path)
    return err.value.problems


def assert_problems(got: list[str], expected: list[str]) -> None:
    """Each expected problem begins one reported line, and nothing else is reported."""
    for e in expected:
        assert any(line.startswith(e) for line in got), (e, got)
    assert len(got) == len(expected), got


def test_all_errors_reported_with_file_and_key_path(tmp_path) -> None:
    d = base()
    d["models"][1]["objective"] = "cwtt"
    d["models"].append({"preset": "bert-huge", "objective": "ce"})
    d["tasks"].append({"type": "validation", "name": "val2", "metrics": ["mccc"]})
    d["tasks"].append({"type": "throughput", "name": "speed2", "params": {"stepz": 3}})
    d["sweep"] = {"vocab_size": [500, 1000, 3]}
    d["recipe"]["corpus"] = ["corpus/no-such-file.txt"]
    p = write(tmp_path, d)
    got = problems(p)
    expected = [
        f"{p}: models[1].objective: unknown objective 'cwtt'; did you mean 'cwt'",
        f"{p}: models[2].preset: unknown preset 'bert-huge'",
        f"{p}: tasks[2].metrics[0]: unknown metric 'mccc'; did you mean 'mcc'",
        f"{p}: tasks[3].params.stepz: unknown key",
        f"{p}: sweep.vocab_size[2]: 3 is too small for the encoder tokenizer trained here",
        f"{p}: recipe.corpus[0]: no file matches 'corpus/no-such-file.txt'",
    ]
    assert_problems(got, expected)


def test_unknown_top_level_and_nested_keys(tmp_path) -> None:
    d = base()
    d["sedes"] = [1]
    d["recipe"]["stepz"] = 3
    d["models"][0]["objectiv"] = "ce"
    d["models"][1]["loss"] = {"duplicates": "mask"}
    d["tasks"][0]["evry"] = 3
    p = write(tmp_path, d)
    assert sorted(problems(p)) == sorted(
        [
            f"{p}: sedes: unknown key; did you mean 'seeds', 'sweep', 'sweep_models'?",
            f"{p}: recipe.stepz: unknown key; did you mean 'steps', 'eps'?",
            f"{p}: models[0].objectiv: unknown key; did you mean 'objective'?",
            f"{p}: models[1].loss: unknown key; did you mean 'recipe.loss'?",
            f"{p}: tasks[0].evry: unknown key; did you mean 'every'?",
        ]
    )


def test_unknown_keys_of_a_loss_and_of_task_params_name_the_key_meant(tmp_path) -> None:
    d = base()
    d["models"][1]["recipe"] = {"loss": {"duplicate": "mask"}}
    d["tasks"][0]["params"] = {"batchsize": 3}
    p = write(tmp_path, d)
    assert sorted(problems(p)) == sorted(
        [
            f"{p}: models[1].recipe.loss.duplicate: unknown key; did you mean 'duplicates'?",
            f"{p}: tasks[0].params.batchsize: unknown key; did you mean 'batch_size', 'batches'?",
        ]
    )


def test_yaml_syntax_and_shape_errors(tmp_path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nmodels: [\n")
    assert "invalid YAML" in problems(p)[0]
    p.write_text("- just a list\n")
    assert problems(p) == [f"{p}: <root>: expected a mapping of suite keys, got list"]
    assert problems(tmp_path / "missing.yaml") == [f"{tmp_path / 'missing.yaml'}: file not found"]
    assert problems(tmp_path / "bda.yaml") == [
        f"{tmp_path / 'bda.yaml'}: file not found; did you mean '{tmp_path / 'bad.yaml'}'?"
    ]
    assert problems(tmp_path / "no" / "x.yaml") == [
        f"{tmp_path / 'no' / 'x.yaml'}: file not found (no folder {tmp_path / 'no'})"
    ]


def test_a_suite_path_with_a_folder_is_a_path_not_a_name() -> None:
    assert resolve_suite_path("quickstart") == Path("suites/quickstart.yaml")
    assert resolve_suite_path("suites/nosuch/") == Path("suites/nosuch")
    assert resolve_suite_path("elsewhere/quickstart") == Path("elsewhere/quickstart")


def test_include_merges_and_detects_cycles(tmp_path) -> None:
    parent = base()
    parent["name"] = "parent"
    write(tmp_path, parent, "parent.yaml")
    child = {
        "name": "child",
        "include": ["parent.yaml"],
        "models": [{"preset": "bert-tiny", "objective": "nce"}],
        "recipe": {"steps": 3},
    }
    suite = load_suite(write(tmp_path, child, "child.yaml"))
    assert suite.name == "child"
    assert [m.objective for m in suite.models] == ["ce", "cwt", "nce"]
    assert suite.recipe.steps == 3 and suite.recipe.vocab_size == 400  # merged mapping
    one = load_suite(write(tmp_path, {**child, "include": "parent.yaml"}, "one.yaml"))
    assert [m.objective for m in one.models] == ["ce", "cwt", "nce"]  # one file, unlisted
    bad = write(tmp_path, {"name": "c", "include": ["", "nope.yaml"]}, "c.yaml")
    assert problems(bad) == [f"{bad}: include[0]: file not found: {tmp_path}"]
    write(tmp_path, {"name": "a", "include": ["b.yaml"]}, "a.yaml")
    write(tmp_path, {"name": "b", "include": ["a.yaml"]}, "b.yaml")
    assert "cycle" in problems(tmp_path / "a.yaml")[0]


def test_semantic_checks(tmp_path) -> None:
    d = base()
    d["baseline"] = "nobody"
    d["models"].append({"checkpoint": str(tmp_path / "nope"), "preset": "bert-tiny"})
    d["models"].append({"preset": "bert-tiny", "objective": "cwt", "finetune_causal": True})
    d["models"].append({"preset": "bert-tiny", "objective": "ce"})
    d["sweep"] = {"colour": ["red"]}
    got = problems(write(tmp_path, d))
    assert any("baseline: 'nobody' is not a model label" in g for g in got)
    assert any("models[2]: give either checkpoint or preset" in g for g in got)
    assert any("models[2].checkpoint: not found" in g for g in got)
    assert any("models[3].finetune_causal: only decoders" in g for g in got)
    assert any(
        "models[4].name: duplicate model label 'bert-tiny-ce' (also models[0])" in g for g in got
    )
    assert any("sweep.colour: not a sweepable key" in g for g in got)


def test_model_loss_task_and_sweep_mistakes_name_their_key(tmp_path) -> None:
    """The rest of the suite checks, each problem with its file and key: causal fine-tuning
    of a vanilla decoder, a loss option out of range, a metric the task type does not give, a
    task restricted to a label no model has, a swept loss option or corpus that cannot be."""
    d = base()
    d["models"].append({"preset": "pythia-tiny", "objective": "ce", "finetune_causal": True})
    d["recipe"]["loss"] = {"temperature": 0}
    d["tasks"][0]["metrics"] = ["accuracy"]
    d["tasks"][1]["models"] = ["bert-tiny-cwt", "bert-tiny-nce"]
    d["sweep"] = {
        "loss.duplicates": ["keep", "drop"],
        "corpus": [["synthetic:50"], ["corpus/no-such-file.txt"]],
        "tasks.validation.batches": [],
    }
    p = write(tmp_path, d)
    got = problems(p)
    expected = [
        f"{p}: models[2].finetune_causal: only headless objectives need it",
        f"{p}: recipe.loss.temperature: Input should be greater than 0",
        f"{p}: tasks[0].metrics[0]: 'validation' does not produce 'accuracy' (it gives ",
        f"{p}: tasks[1].models[1]: 'bert-tiny-nce' is not a model label (labels: ",
        f"{p}: sweep.loss.duplicates[1]: Input should be 'keep', 'mask' or 'unique'",
        f"{p}: sweep.corpus[1][0]: no file matches 'corpus/no-such-file.txt'",
        f"{p}: sweep.tasks.validation.batches: expected a non-empty list of values",
        # the shared temperature is also one the vanilla models' objective never reads
        f"{p}: recipe.loss.temperature: the objective 'ce' does not read temperature",
    ]
    assert_problems(got, expected)


def test_a_setting_no_model_reads_is_named_where_it_was_set(tmp_path) -> None:
    """A loss option its objective never reads, or an encoders-only setting on a decoder,
    would train the same weights under another key: named at the key that set it (the
    suite's recipe or the model's), per model and value, each once. A sweep over an option
    applies only to the models whose objective reads it (`Suite.point_for`): ce is not
    swept over temperature."""
    d = base()
    d["models"][0]["recipe"] = {"loss": {"negatives": "global"}}  # ce
    d["models"].append({"preset": "pythia-tiny", "objective": "cwt"})
    d["recipe"]["loss"] = {"ce_impl": "chunked"}  # read by ce only
    d["recipe"]["mlm_probability"] = 0.2
    d["sweep"] = {"loss.temperature": [1.0, 0.5]}
    p = write(tmp_path, d)
    ce, cwt = "the objective 'ce' does not read", "the objective 'cwt' does not read"
    assert_problems(
        problems(p),
        [
            f"{p}: models[0].recipe.loss.negatives: {ce} negatives (it reads ce_impl, chunk, "
            "score_dtype): another value gives the run another pretraining key",
            f"{p}: recipe.loss.ce_impl: {cwt} ce_impl (it reads chunk, cwt_impl, duplicates, ",
            f"{p}: recipe.mlm_probability: applies to encoders; pythia-tiny is a decoder",
        ],
    )


def test_model_settings_that_would_never_be_read_are_refused(tmp_path) -> None:
    """`finetune:` without `finetune_causal`, and a checkpoint's `recipe:`, were accepted
    and ignored: the file read as if they applied."""
    d = base()
    d["models"].append({"preset": "pythia-tiny", "objective": "cwt", "finetune": {"steps": 7}})
    d["models"].append({"checkpoint": str(tmp_path), "recipe": {"lr": 1e-3, "steps": 3}})
    p = write(tmp_path, d)
    assert_problems(
        problems(p),
        [
            f"{p}: models[2].finetune: read only with finetune_causal: true",
            f"{p}: models[3].recipe: lr, steps: the checkpoint {tmp_path} is not pretrained here",
        ],
    )
    d["models"][2]["finetune_causal"] = True
    del d["models"][3]  # (the tiny suite's tasks follow pretraining, which it has none of)
    assert load_suite(write(tmp_path, d)).models[2].finetune.steps == 7


def test_the_suite_a_run_writes_reads_back_and_one_that_does_not_is_named(tmp_path) -> None:
    """`hlm run` writes the whole suite, every default spelled out (a `finetune:` for each
    model), to `_suite.yaml`; `hlm leaderboard`, `power` and the report read its baseline
    back. One that no longer reads loses that baseline, and with it the marks: a warning
    says so, naming the file and the key, where it once went without a word."""
    suite = load_suite(write(tmp_path, base()))
    dump = suite.model_dump(mode="json")
    assert dump["models"][0]["finetune"] is not None and not dump["models"][0]["finetune_causal"]
    board = tmp_path / "board"
    board.mkdir()
    (board / "_suite.yaml").write_text(yaml.safe_dump(dump, sort_keys=False))
    assert last_suite(board) == suite.model_copy(update={"path": ""})
    dump["seeds"] = [0, 0]
    (board / "_suite.yaml").write_text(yaml.safe_dump(dump, sort_keys=False))
    with pytest.warns(
        UserWarning,
        match=r"_suite.yaml: does not read as a suite, so its "
        r"baseline and settings go unused .*seeds: 0 listed twice",
    ):
        assert last_suite(board) is None


def test_one_model_under_two_names_is_refused(tmp_path) -> None:
    """A copied entry renamed but not changed would be compared with itself: an ablation
    that changed nothing, read as one that made no difference."""
    d = base()
    d["models"].append({"name": "cwt-masked", "preset": "bert-tiny", "objective": "cwt"})
    p = write(tmp_path, d)
    assert_problems(
        problems(p),
        [f"{p}: models[2]: the same model as models[1] (bert-tiny-cwt), but for its name"],
    )
    d["models"][2]["recipe"] = {"loss": {"duplicates": "mask"}}
    assert [m.label() for m in load_suite(write(tmp_path, d)).models][2] == "cwt-masked"


def test_a_seed_or_a_sweep_value_listed_twice_is_refused(tmp_path) -> None:
    """Each runs once: `seeds: [0, 0]` was one seed under a file that reads two, and the
    comparisons counted one replicate per model."""
    d = base()
    d["seeds"] = [0, 1, 0]
    d["sweep"] = {"lr": [1.0e-3, 0.001], "corpus": [["synthetic:50"], ["synthetic:50"]]}
    p = write(tmp_path, d)
    assert_problems(
        problems(p),
        [
            f"{p}: seeds: 0 listed twice: each value runs once",
            f"{p}: sweep.lr: 0.001 listed twice",
            f'{p}: sweep.corpus: ["synthetic:50"] listed twice',
        ],
    )
    d["seeds"], d["sweep"] = [0, 1], {"lr": [1.0e-3, 2.0e-3]}
    assert load_suite(write(tmp_path, d)).seeds == [0, 1]


def test_sweep_values_written_apart_but_read_as_one_are_refused(tmp_path) -> None:
    """YAML reads `1e-3` (no dot) as text, which the run reads as 0.001; `corpus: X` is
    `[X]`: such a pair passed the check on the values as written, and the sweep listed a
    point that changed nothing (one pretraining run under two labels)."""
    d = base()
    d["sweep"] = {
        "lr": ["1e-3", 0.001],
        "corpus": ["synthetic:50", ["synthetic:50"]],
        "loss.chunk": [256, "256"],
        "tasks.validation.batches": ["2", 2],
    }
    p = write(tmp_path, d)
    one = "are read as one value"
    assert_problems(
        problems(p),
        [
            f"{p}: sweep.corpus[1]: ['synthetic:50'] and sweep.corpus[0] ('synthetic:50') {one}",
            f"{p}: sweep.loss.chunk[1]: '256' and sweep.loss.chunk[0] (256) {one}, 256",
            f"{p}: sweep.lr[1]: 0.001 and sweep.lr[0] ('1e-3') {one}, 0.001: each value runs once",
            f"{p}: sweep.tasks.validation.batches[1]: 2 and sweep.tasks.validation.batches[0] "
            f"('2') {one}, 2",
        ],
    )
    d["sweep"] = {"lr": ["1e-3", 0.002], "corpus": ["synthetic:50", ["synthetic:60"]]}
    assert len(expand(load_suite(write(tmp_path, d)))) > 0


def test_a_yes_no_in_a_sweep_is_one_problem_per_value(tmp_path) -> None:
    """A swept value is checked by the sweep and again in each model's config: one line each,
    worded as every other problem (no pydantic "Value error, " prefix)."""
    d = base()
    d["sweep"] = {"steps": [4, True], "tasks.validation.batches": [True], "loss.chunk": [True]}
    p = write(tmp_path, d)
    assert_problems(
        problems(p),
        [
            f"{p}: sweep.loss.chunk[0]: True is a yes/no, not a number",
            f"{p}: sweep.steps[1]: True is a yes/no, not a number",
            f"{p}: sweep.tasks.validation.batches[0]: True is a yes/no, not a number",
        ],
    )


def test_validate_verb_exit_codes(tmp_path, capsys) -> None:
    assert hlm(["validate", str(TINY)]) == 0
    assert "ok (2 models, 2 tasks, 8 cells)" in capsys.readouterr().out
    one = {**base(), "models": base()["models"][:1], "tasks": base()["tasks"][:1]}
    assert hlm(["validate", str(write(tmp_path, one, "one.yaml"))]) == 0
    assert "ok (1 model, 1 task, " in capsys.readouterr().out
    d = base()
    d["tasks"][0]["type"] = "validatoin"
    p = write(tmp_path, d)
    assert hlm(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}: tasks[0].type: unknown task type 'validatoin'; did you mean 'validation'" in err
    assert "Traceback" not in err


# --- fuzzing: whatever the YAML, the loader answers with a SuiteError or a Suite -------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5000), st.floats(allow_nan=True), st.text(max_size=12)
)
values = st.recursive(
    scalars,
    lambda c: st.one_of(
        st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)
    ),
    max_leaves=8,
)
KEYS = [
    "name",
    "version",
    "models",
    "recipe",
    "tasks",
    "seeds",
    "sweep",
    "baseline",
    "include",
    "plugins",
    "description",
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    mutations=st.lists(
        st.tuples(st.sampled_from([*KEYS, "models.0", "tasks.0", "recipe", "sweep"]), values),
        max_size=4,
    )
)
def test_fuzzed_suites_fail_cleanly(tmp_path, mutations) -> None:
    d = base()
    for key, value in mutations:
        head, _, idx = key.partition(".")
        if idx and isinstance(d.get(head), list) and d[head]:
            d[head][int(idx)] = value
        else:
            d[head] = value
    p = tmp_path / "fuzz.yaml"
    p.write_text(yaml.safe_dump(d))
    try:
        load_suite(p)
    except SuiteError as exc:
        assert exc.problems and all(line.startswith(f"{p}: ") for line in exc.problems)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(max_size=200))
def test_fuzzed_raw_text_fails_cleanly(tmp_path, text) -> None:
    p = tmp_path / "raw.yaml"
    p.write_text(text)
    try:
        load_suite(p)
    except SuiteError as exc:
        assert exc.problems


def test_a_task_parameter_sweep_is_checked_against_its_entry(tmp_path) -> None:
    """`tasks.LABEL.PARAM`: a task entry of the suite, a param of its type, values its params
    model takes; each problem names the file and the sweep key."""
    d = base()
    d["sweep"] = {
        "tasks.validation.batches": [2, 0],  # batches must be positive
        "tasks.validaton.batches": [2],  # a misspelt label
        "tasks.throughput.stepz": [3],  # not a param of throughput
        "tasks.throughput": [3],  # no param
    }
    p = write(tmp_path, d)
    got = problems(p)
    expected = [
        f"{p}: sweep.tasks.validation.batches[1]: Input should be greater than 0",
        f"{p}: sweep.tasks.validaton.batches: unknown task label 'validaton'; did you mean "
        "'validation'",
        f"{p}: sweep.tasks.throughput.stepz: unknown throughput param 'stepz'; did you mean "
        "'steps'",
        f"{p}: sweep.tasks.throughput: expected tasks.<task label>.<param>",
    ]
    assert_problems(got, expected)


def test_a_task_parameter_sweep_expands_that_task_alone(tmp_path) -> None:
    """Each point runs the swept task with its value on the same pretraining; the other tasks
    run once, in the cells (and under the ids) they have without the sweep."""
    d = base()
    without = {c.cell_id for c in expand(load_suite(write(tmp_path, d, "a.yaml")))}
    d["sweep"] = {"tasks.validation.batches": [1, 3]}
    cells = expand(load_suite(write(tmp_path, d, "b.yaml")))
    val = [c for c in cells if c.task.type == "validation"]
    assert sorted((c.label, c.seed, c.task.params["batches"]) for c in val) == sorted(
        (m, s, b) for m in ("bert-tiny-ce", "bert-tiny-cwt") for s in (0, 1) for b in (1, 3)
    )
    assert {json.dumps(c.sweep) for c in val} == {
        '{"tasks.validation.batches": 1}',
        '{"tasks.validation.batches": 3}',
    }
    thr = [c for c in cells if c.task.type == "throughput"]
    assert len(thr) == 4 and all(c.sweep == {} for c in thr)  # 2 models x 2 seeds, once each
    assert {c.cell_id for c in thr} <= without
    pairs = {(c.label, c.seed): c.pretrain_key for c in cells}
    assert all(c.pretrain_key == pairs[(c.label, c.seed)] for c in cells)  # one pretraining


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("models", 0, "preset"), "bert-tiny\n# Fake heading"),
        (("recipe", "corpus"), ["synthetic\x1b[2J"]),
        (("seeds",), {"0\n": 1}),
    ],
)
def test_a_name_holding_a_control_character_is_refused_at_the_source(
    tmp_path, where: tuple, value: object
) -> None:
    data = base()
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    data["description"] = "prose may\nspan lines"
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    got = problems(path)
    assert len(got) == 1 and "holds a control character" in got[0], got
    assert "\n" not in got[0] and "\x1b" not in got[0]


GLUE_OK = {"tasks": ["sst2"], "source": "local", "epochs": 1}


@pytest.mark.parametrize(
    ("task", "said"),
    [
        ({"type": "glue", "params": {**GLUE_OK, "epochs": 10**12}}, "params.epochs"),
        ({"type": "glue", "params": {**GLUE_OK, "batch_size": 10**12}}, "params.batch_size"),
        ({"type": "glue", "params": {**GLUE_OK, "finetune_seeds": 10**12}}, "finetune_seeds"),
        ({"type": "glue", "params": {**GLUE_OK, "lr_grid": [1e-3, 0.001]}}, "given twice"),
        ({"type": "glue", "params": {**GLUE_OK, "lr": 1e-4, "lr_grid": [1e-4, 1e-3]}}, "lr_grid"),
        ({"type": "glue", "params": {**GLUE_OK, "tasks": ["sst2", "sst2"]}}, "given twice"),
        ({"type": "probe", "params": {"features": ["mean", "mean"]}}, "given twice"),
        ({"type": "probe", "params": {"tasks": ["sst2", "sst2"]}}, "given twice"),
        ({"type": "probe", "params": {"max_length": 1024}}, "past the 512 positions"),
        ({"type": "glue", "params": {**GLUE_OK, "max_length": 600}}, "past the 512 positions"),
    ],
)
def test_task_options_are_bounded_and_each_given_once(tmp_path, task: dict, said: str) -> None:
    data = base()
    data["tasks"] = [task]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    got = problems(path)
    assert any(said in line and "tasks[0].params" in line for line in got), got
