"""The `hlm` command line: verbs, generated flags and help, close-match errors, wiring."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import harness.run.runner
from harness.cli import build_parser
from harness.cli import main as hlm
from harness.cli.verbs import VERBS
from harness.results.leaderboard import write_cell
from tests.harness.results.test_leaderboard import row

ROOT = Path(__file__).parents[3]


def test_a_mistyped_verb_gets_a_suggestion(capsys) -> None:
    assert hlm(["rn", "suites/quickstart.yaml"]) == 2
    assert "unknown verb 'rn'; did you mean 'run'" in capsys.readouterr().err


def test_help_shows_no_generated_placeholders() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb")
    text = sub.choices["pretrain"].format_help()  # type: ignore[attr-defined]
    assert (
        "(default: None)" not in text and "--loss.duplicates" in text and "--loss.cwt-impl" in text
    )
    assert "unset: the preset's" in text
    ft = sub.choices["finetune-causal"].format_help()  # type: ignore[attr-defined]
    assert "--warmup-steps" in ft and "(default: None)" not in ft


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verbs_help_says_what_it_does(verb: str) -> None:
    """Between the usage and the arguments, a sentence: the verb's own description where it
    has one, else the line `hlm --help` lists it with."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb")
    description = sub.choices[verb].description  # type: ignore[attr-defined]
    assert description and description[0].isupper() and description.rstrip().endswith(".")
    said = VERBS[verb]
    assert description.startswith(f"{said[:1].upper()}{said[1:]}.") or len(description) > 80


def test_publishs_two_kinds_say_what_they_upload() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb")
    publish = sub.choices["publish"]  # type: ignore[attr-defined]
    what = next(a for a in publish._actions if a.dest == "what")
    for kind, repo in (("model", "a model repo"), ("leaderboard", "a dataset repo")):
        assert repo in what.choices[kind].description
    assert "a run's name" in what.choices["model"].format_help()


def test_ls_takes_plugins_like_pretrain(capsys) -> None:
    """Each objective with the loss options it reads (the others, set, are refused)."""
    assert hlm(["ls", "--plugins", str(ROOT / "examples" / "cosine_cwt.py")]) == 0
    out = capsys.readouterr().out
    assert "cosine-cwt" in out
    assert "(loss: margin, temperature; from plugin file cosine_cwt.py" in out
    assert "weight-tied head (loss: ce_impl, chunk, score_dtype)" in out


def test_ls_lists_the_loss_kernels_and_where_each_runs(capsys) -> None:
    assert hlm(["ls"]) == 0
    out = capsys.readouterr().out
    kernels = out[out.index("loss kernels") : out.index("task types")]
    assert "recompute  [any device]" in kernels
    assert "cce        [CUDA, pip install cut-cross-entropy]" in kernels


def test_run_passes_publish(monkeypatch, tmp_path) -> None:
    seen: dict[str, object] = {}

    def fake(path, **kwargs):  # type: ignore[no-untyped-def]
        seen.update(kwargs)
        return harness.run.runner.RunSummary(0, 0, 0, [], tmp_path)

    monkeypatch.setattr(harness.run.runner, "run_suite", fake)
    assert hlm(["run", "suites/quickstart.yaml", "--publish"]) == 0
    assert seen["publish"] is True  # the flag was parsed, then dropped


def test_validate_accepts_folders_and_globs(capsys, tmp_path) -> None:
    assert hlm(["validate", str(ROOT / "suites")]) == 0
    out = capsys.readouterr().out
    assert out.count(": ok (") == len(list((ROOT / "suites").glob("*.yaml")))
    assert hlm(["validate", str(ROOT / "suites" / "q*.yaml")]) == 0
    assert "quickstart.yaml: ok" in capsys.readouterr().out


def test_validate_warns_of_a_pretraining_shorter_than_its_presets_warm_up(capsys, tmp_path) -> None:
    """Before the hours a run takes; the shipped suites set their warm-up (none is warned of)."""
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nmodels:\n  - {preset: bert-small, objective: ce}\n"
        "  - {preset: bert-tiny, objective: ce}\n"
        "recipe: {corpus: [synthetic:300], vocab_size: 400, steps: 2000}\n"
        "tasks:\n  - type: validation\n"
    )
    assert hlm(["validate", str(suite)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"WARNING {suite}: bert-small-ce: warmup_steps: the preset bert-small's 10000 (for its "
        "recipe's 400000 steps) is not below steps 2000: the learning rate climbs for the whole "
        "run, never reaching lr 0.0002 nor decaying; set warmup_steps (the recipe's share of "
        "2000 steps is 50)"
    ]
    assert hlm(["validate", str(ROOT / "suites")]) == 0
    assert "WARNING" not in capsys.readouterr().err


@pytest.fixture
def board(tmp_path: Path) -> Path:
    lb = tmp_path / "lb"
    write_cell(lb / "demo", "c1", [row("a", "val_ppl", 3.0), row("b", "val_ppl", 2.0)])
    shutil.copy(ROOT / "suites" / "quickstart.yaml", tmp_path / "demo.yaml")
    return lb


@pytest.mark.parametrize(
    ("flag", "value", "close"),
    [("--sort", "validation/val_pppl", "validation/val_ppl"), ("--task", "lm_eval", None)],
)
def test_leaderboard_typos_get_close_match_errors(
    board: Path, capsys, flag: str, value: str, close: str | None
) -> None:
    assert hlm(["leaderboard", "demo", "--leaderboards", str(board), flag, value]) == 2
    err = capsys.readouterr().err
    assert f"unknown {flag + ' column' if flag == '--sort' else 'task'} {value!r}" in err
    if close:
        assert f"did you mean {close!r}" in err


@pytest.mark.parametrize("verb", ["leaderboard", "plot", "report", "power"])
def test_a_misspelt_suite_is_named_and_leaves_no_folder(board: Path, capsys, verb: str) -> None:
    assert hlm([verb, "dmeo", "--leaderboards", str(board)]) == 2
    assert "no results in" in capsys.readouterr().err
    assert sorted(p.name for p in board.iterdir()) == ["demo"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["leaderboard", "demo", "--width", "-5"], "--width: -5 is below 1"),
        (["power", "demo", "--claims", "0"], "--claims: 0 is below 1"),
        (["power", "demo", "--claims", "two"], "--claims: 'two' is not a whole number"),
        (["power", "demo", "--effect", "inf"], "--effect: 'inf' is not a finite number"),
        (["evaluate", "ckpt", "--tasks", "x", "--num_fewshot", "-1"], "-1 is below 0"),
    ],
)
def test_out_of_range_flag_values_are_refused_by_argparse(
    board: Path, capsys, argv: list[str], says: str
) -> None:
    """A value out of a flag's range is argparse's one-line error (status 2), never a
    traceback from deep inside the command."""
    with pytest.raises(SystemExit) as stop:
        hlm([*argv, "--leaderboards", str(board)] if argv[0] != "evaluate" else argv)
    assert stop.value.code == 2 and says in capsys.readouterr().err


def test_leaderboard_task_selects_sub_tasks(board: Path, capsys) -> None:
    import pandas as pd

    from harness.report.tables import select_task

    tasks = pd.Series(["lm_eval/hlm_lambada", "lm_eval/hlm_boolq", "validation"])
    assert list(select_task(tasks, "lm_eval")) == [True, True, False]  # was "no results yet"
    assert list(select_task(tasks, "validation")) == [False, False, True]
    assert hlm(["leaderboard", "demo", "--leaderboards", str(board), "--task", "validation"]) == 0
    assert "val_ppl" in capsys.readouterr().out


@pytest.mark.parametrize("verb", ["", *VERBS])
def test_help_imports_no_heavy_library(verb: str) -> None:
    """A verb's flags come from argparse alone: its --help imports neither torch nor
    transformers nor pandas (the time it takes is measured by `hlm bench --only cli`)."""
    code = (
        "import sys\nfrom harness.cli import main\n"
        f"try:\n    main({[verb] if verb else []!r} + ['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'transformers', 'pandas') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_verb_table_builds_every_verb() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb")
    assert list(sub.choices) == list(VERBS)
    for name, p in sub.choices.items():  # type: ignore[attr-defined]
        assert p.get_default("run") is not None, name


def test_false_friends_name_the_flag_meant(capsys) -> None:
    """Hugging Face's --save-steps is an interval: ours would read it as a list, so the flag
    is --save-at-steps, and the HF spelling names both of ours; a close typo gets its match."""
    assert hlm(["pretrain", "--save-steps", "500", "--output-dir", "x"]) == 2
    err = capsys.readouterr().err
    assert "--save-every N" in err and "--save-at-steps" in err and "'500'" not in err
    assert hlm(["run", "suites/quickstart.yaml", "--forse"]) == 2
    assert "did you mean --force" in capsys.readouterr().err


def test_an_interval_in_save_steps_points_to_save_every() -> None:
    from pydantic import ValidationError

    from zoo.train.config import PretrainConfig

    with pytest.raises(ValidationError, match="use save_every: 500"):
        PretrainConfig(preset="bert-tiny", objective="cwt", output_dir="x", save_at_steps=500)


def _installed(root: Path, module: str, code: str) -> None:
    """A package installed under `root` (on sys.path) with an `hlm.plugins` entry point."""
    (root / f"{module}.py").write_text(code)
    info = root / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hlm.plugins]\n{module} = {module}\n")


def test_installed_plugins_load_through_their_entry_point(tmp_path, monkeypatch, capsys) -> None:
    code = (ROOT / "examples" / "cosine_cwt.py").read_text().replace('"cosine-cwt"', '"ep-cwt"')
    _installed(tmp_path, "hlm_ep_plugin", code)
    _installed(tmp_path, "hlm_ep_broken", "raise RuntimeError('no GPU here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("HLM_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert hlm(["ls"]) == 0 and "ep-cwt" not in capsys.readouterr().out
    monkeypatch.delenv("HLM_DISABLE_PLUGIN_AUTOLOAD")
    assert hlm(["ls"]) == 2  # the broken one is named, with its entry point group
    assert "installed plugin hlm_ep_broken (hlm_ep_broken, entry point group hlm.plugins)" in (
        capsys.readouterr().err
    )
    (tmp_path / "hlm_ep_broken-0.1.dist-info" / "entry_points.txt").unlink()
    assert hlm(["ls"]) == 0 and "ep-cwt" in capsys.readouterr().out


def test_leaderboard_names_a_cell_cut_off_before_its_final_checkpoint(board: Path, capsys) -> None:
    write_cell(board / "demo", "c2.step-0000005", [row("c", "val_ppl", 9.0, step=5)])
    assert hlm(["leaderboard", "demo", "--leaderboards", str(board)]) == 0
    out = capsys.readouterr().out
    table, note = out.split("not shown: ")
    assert "| c " not in table and "| a " in table
    assert note.split()[:4] == ["c", "seed", "0", "validation"]
    assert "(steps 5 only; its final checkpoint is not evaluated yet" in note.replace("\n", " ")


def test_the_mfu_benchmark_asks_for_a_gpu(capsys) -> None:
    assert hlm(["bench", "--only", "mfu"]) == 2
    err = capsys.readouterr().err
    assert "hlm bench: error: --only mfu" in err and "add --device cuda" in err
    assert hlm(["bench", "--only", "bf16", "--device", "cuda"]) == 2
    assert "--only bf16: a CPU comparison" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "parts"),
    [
        ([], ("mfu", "cwt", "steps")),  # the goal's steps first
        (["--quick"], ("cwt", "steps")),
        (["--only", "steps"], ("steps",)),
    ],
)
def test_the_gpu_benchmark_measures_the_mfu_steps_first_by_default(
    monkeypatch, capsys, flags: list[str], parts: tuple[str, ...]
) -> None:
    import benchmarks

    asked: list[tuple[str, ...]] = []

    def fake(quick: bool = False, parts: tuple[str, ...] = ()) -> list:
        asked.append(parts)
        return []

    monkeypatch.setattr(benchmarks, "run_cuda_bench", fake)
    assert hlm(["bench", "--device", "cuda", *flags]) == 0
    assert asked == [parts]


def test_leaderboard_says_what_a_trivial_models_column_is(board: Path, capsys) -> None:
    write_cell(board / "demo", "c2", [row("a", "majority", 0.5), row("b", "majority", 0.5)])
    assert hlm(["leaderboard", "demo", "--leaderboards", str(board), "--width", "400"]) == 0
    out = capsys.readouterr().out
    assert (
        "A trivial model's score, beside the models' and not compared: majority: the primary "
        "metric of predicting the training set's most frequent class" in out
    )
    write_cell(board / "demo", "c2", [row("a", "val_loss", 0.5), row("b", "val_loss", 0.5)])
    assert hlm(["leaderboard", "demo", "--leaderboards", str(board)]) == 0
    assert "trivial model" not in capsys.readouterr().out


def test_a_view_of_the_leaderboard_changes_no_mark(tmp_path: Path, capsys) -> None:
    """Holm's family is the leaderboard's, not the view's. glue/b's gain (p = 0.013 alone)
    does not hold among the board's five comparisons (0.013 x 4 > 0.05); shown alone with
    `--task glue/b`, it must not gain the † it lacks in the whole table. A best-epoch
    column is not tested at all: its gain, as large as glue/a's, stays unmarked."""
    base = [0.50, 0.52, 0.54]
    gains = {
        "glue/a": [0.2, 0.201, 0.2005],  # p = 2e-6
        "glue/b": [0.04, 0.06, 0.05],  # p = 0.013
        **{f"glue/null{i}": [0.01, -0.01, 0.0] for i in range(3)},
    }
    rows = []
    for task, gain in gains.items():
        for seed, (b, g) in enumerate(zip(base, gain, strict=True)):
            rows += [
                row("base", "accuracy", b, seed, task=task),
                row("m", "accuracy", b + g, seed, task=task),
            ]
            if task == "glue/a":
                rows += [
                    row(x, "accuracy@best", b + (g if x == "m" else 0), seed, task=task)
                    for x in ("base", "m")
                ]
    write_cell(tmp_path / "lb" / "demo", "c", [{**r, "cell_id": "c"} for r in rows])
    argv = ["leaderboard", "demo", "--leaderboards", str(tmp_path / "lb"), "--baseline", "base"]
    assert hlm([*argv, "--format", "csv"]) == 0
    import io

    import pandas as pd

    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    table = table.set_index(["model", "task", "metric"])
    assert bool(table.loc[("m", "glue/a", "accuracy"), "significant"])
    assert not bool(table.loc[("m", "glue/b", "accuracy"), "significant"])
    assert not bool(table.loc[("m", "glue/a", "accuracy@best"), "significant"])
    assert table.loc[("m", "glue/a", "accuracy@best"), "test"].startswith("not tested")
    assert hlm([*argv, "--task", "glue/b", "--width", "300"]) == 0
    shown = capsys.readouterr().out
    line = next(x for x in shown.splitlines() if x.startswith("| m "))
    assert "0.5700" in line and "†" not in line  # a † alone would be family 1's
    assert "over the leaderboard's 5 comparisons" in shown


def test_a_bug_is_one_line_naming_its_traceback_file(monkeypatch, capsys, tmp_path) -> None:
    """An unexpected exception is one line (the verb, the cause, where its traceback went),
    status 3 (bad input is 2); --debug shows the traceback itself."""
    import harness.cli as cli
    import harness.cli.leaderboard

    def broken(args):  # a verb with a bug
        return 1 / 0

    monkeypatch.setattr(harness.cli.leaderboard, "run", broken)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert cli.main(["leaderboard", "x"]) == 3
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("hlm leaderboard: internal error: ZeroDivisionError: division by zero")
    (kept,) = tmp_path.glob("hlm-leaderboard-*.traceback.txt")
    assert str(kept) in line and "1 / 0" in kept.read_text()
    assert cli.main(["leaderboard", "x", "--debug"]) == 3
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_hlm_says_its_version(capsys) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        hlm(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"hlm {version('headless-zoo')}"


@pytest.mark.parametrize(
    ("flag", "ours"),
    [
        ("--learning_rate", "--lr"),
        ("--per_device_train_batch_size", "--micro-batch-size"),
        ("--gradient_accumulation_steps", "--batch-size B with --micro-batch-size M"),
        ("--max_grad_norm", "--grad-clip"),
        ("--logging_steps", "--log-every"),
    ],
)
def test_hugging_face_trainers_names_point_to_ours(capsys, flag: str, ours: str) -> None:
    assert hlm(["pretrain", flag, "1"]) == 2
    assert f"unrecognized argument '{flag}'; did you mean {ours}" in capsys.readouterr().err


def test_dashes_and_underscores_are_one_spelling(capsys) -> None:
    """A flag a verb knows in the other spelling is read as it: `--vocab_size` as
    `--vocab-size` (Hugging Face's habit), `--output-path` as `--output_path` (lm-eval's); a
    Trainer flag whose meaning differs here still points to ours."""
    from harness.cli.parsing import parse as _parse

    args = _parse(["pretrain", "--vocab_size", "400", "--warmup_steps", "1", "--output_dir", "x"])
    assert not isinstance(args, int)
    assert (args.vocab_size, args.warmup_steps, args.output_dir) == (400, 1, "x")
    args = _parse(
        ["evaluate", "ckpt", "--tasks", "hlm_boolq", "--output-path", "o", "--num-fewshot", "2"]
    )
    assert not isinstance(args, int) and (args.output_path, args.num_fewshot) == ("o", 2)
    assert _parse(["pretrain", "--max_steps", "3"]) == 2
    assert "did you mean --steps?" in capsys.readouterr().err
    assert _parse(["pretrain", "--save_steps", "3"]) == 2  # --save-every here: not the same
    assert "--save-every N" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["plot", "quickstart", "--out", "figs"],
        ["report", "quickstart", "--out", "page.html"],
        ["publish", "leaderboard", "quickstart", "--repo", "me/x", "--write-to", "review"],
    ],
)
def test_every_verb_writes_under_output_dir(capsys, argv: list[str]) -> None:
    """One name for where a verb writes: the older spellings point to it."""
    assert hlm(argv) == 2
    assert "did you mean --output-dir DIR" in capsys.readouterr().err
