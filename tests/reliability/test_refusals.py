"""Inputs that were once accepted silently are refused, each with its file, flag or key named
and nothing already written lost: a run folder that holds a run, a fine-tuning into its own
input, weights that do not fit, a non-finite metric, two tasks under one label, a YAML key
twice on one line, YAML nested past reason, an empty --output-dir."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file

from harness.cli import main as hlm
from harness.run.rows import cell_rows
from harness.tasks import Result
from tests.tiny import TINY_RUN
from zoo.errors import UserError
from zoo.train.atomic import COMMIT
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain
from zoo.yaml_files import YamlFileError, parse_yaml


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> PretrainConfig:
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="cwt",
        output_dir=str(tmp_path_factory.mktemp("refusals") / "r"),
        steps=2,
        **TINY_RUN,
    )
    pretrain(cfg)
    return cfg


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_a_folder_that_holds_a_run_is_refused_without_resume(run, tmp_path: Path) -> None:
    out = tmp_path / "r"
    shutil.copytree(run.output_dir, out)
    before = _files(out)
    cfg = run.model_copy(update={"output_dir": str(out), "objective": "ce"})
    with pytest.raises(UserError, match=r"holds a run already .* --resume .* --overwrite"):
        pretrain(cfg)
    assert _files(out) == before  # a later --resume never mixes a ce run into the cwt one
    pretrain(cfg.model_copy(update={"overwrite": True}))  # cleared whole, then trained anew
    assert not (out / "checkpoints").exists() or not any((out / "checkpoints").iterdir())
    assert "objective: ce" in (out / "config.yaml").read_text()


def test_overwrite_clears_only_a_folder_that_holds_nothing_but_a_run(run, tmp_path: Path) -> None:
    """`--output-dir . --overwrite` in a project with a run's config.yaml once cleared the
    project: a folder that also holds what no run writes is refused, naming it, untouched."""
    out = tmp_path / "project"
    shutil.copytree(run.output_dir, out)
    (out / "notes.md").write_text("mine\n")
    (out / ".git").mkdir()
    (out / "finetune-causal-0a1b2c3d.lock").write_text("")  # a suite's fine-tuning: a run's own
    before = _files(out)
    cfg = run.model_copy(update={"output_dir": str(out), "overwrite": True})
    with pytest.raises(UserError, match=r"also holds what no run writes \(\.git, notes\.md\)"):
        pretrain(cfg)
    assert _files(out) == before
    (out / "notes.md").unlink()
    (out / ".git").rmdir()
    pretrain(cfg)  # a run's folder and what a suite adds to it: cleared, trained anew
    assert not (out / "finetune-causal-0a1b2c3d.lock").exists()


def test_an_empty_output_dir_is_refused(capsys) -> None:
    assert hlm(["pretrain", "--preset", "bert-tiny", "--output-dir", "", "--steps", "1"]) == 2
    assert "--output-dir: empty" in capsys.readouterr().err


def test_finetune_causal_refuses_to_write_into_its_input(run, capsys) -> None:
    final = Path(run.output_dir) / "final"
    before = _files(final)
    for out in (final, final.parent):
        assert hlm(["finetune-causal", str(final), str(out), "--steps", "1"]) == 2
        assert "would destroy the input" in capsys.readouterr().err
    assert _files(final) == before


def test_finetune_causal_from_the_command_line(run, tmp_path: Path, capsys) -> None:
    """The verb's flags go through its typed settings: a value out of range is refused by
    flag with nothing written, and a valid call prints the checkpoint it wrote."""
    final, out = Path(run.output_dir) / "final", tmp_path / "ft"
    assert hlm(["finetune-causal", str(final), str(out), "--steps", "0"]) == 2
    assert "command line: steps: Input should be greater than 0" in capsys.readouterr().err
    assert not out.exists()
    assert hlm(["finetune-causal", str(final), str(out), "--steps", "1", "--no-progress"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("checkpoint: ") and Path(printed.split(": ", 1)[1]).is_dir()


def test_weights_that_do_not_fit_are_refused_by_name(run, tmp_path: Path) -> None:
    """`--init-from` a checkpoint with a tensor missing: never a model partly at random (one
    from elsewhere: without our commit marker, which would refuse the changed file first)."""
    bad = tmp_path / "bad"
    shutil.copytree(Path(run.output_dir) / "final", bad)
    (bad / COMMIT).unlink()
    weights = load_file(str(bad / "model.safetensors"))
    dropped = sorted(k for k in weights if "layers.0.mlp" in k)[0]
    save_file(
        {k: v for k, v in weights.items() if k != dropped},
        str(bad / "model.safetensors"),
        metadata={"format": "pt"},
    )
    cfg = run.model_copy(update={"output_dir": str(tmp_path / "out"), "init_from": str(bad)})
    with pytest.raises(UserError, match="do not fit") as info:
        pretrain(cfg)
    assert dropped.split(".", 1)[-1] in str(info.value) or dropped in str(info.value)
    assert not (tmp_path / "out").exists()


def test_plain_hf_weights_of_another_shape_than_the_preset_are_refused(tmp_path: Path) -> None:
    """`--init-from` a Hugging Face checkpoint of our own making (no metadata): the preset
    labels the run, its FLOPs and its rows, so weights of another shape are refused, naming
    what differs, with nothing written; weights of the preset's shape continue training."""
    from transformers import BertConfig, BertForMaskedLM

    from zoo.data.synthetic import synthetic_corpus
    from zoo.models import get_spec
    from zoo.tokenizers import train_tokenizer
    from zoo.train.metadata import read_metadata

    tok = train_tokenizer(synthetic_corpus(100), 400, "encoder")
    tiny = get_spec("bert-tiny", len(tok))
    shapes = {
        "same": tiny.build().config,
        "other": BertConfig(**{**tiny.build().config.to_dict(), "num_hidden_layers": 3}),
    }
    for name, config in shapes.items():
        BertForMaskedLM(config).save_pretrained(tmp_path / name)
        tok.save_pretrained(tmp_path / name)
    settings = {**TINY_RUN, "vocab_size": None, "steps": 1}
    cfg = PretrainConfig(preset="bert-tiny", objective="cwt", output_dir="", **settings)
    out = tmp_path / "out-other"
    with pytest.raises(
        UserError,
        match=r"other: not the shape of preset 'bert-tiny': num_layers 3 \(preset: 2\); name",
    ):
        pretrain(
            cfg.model_copy(update={"init_from": str(tmp_path / "other"), "output_dir": str(out)})
        )
    assert not out.exists()
    same = cfg.model_copy(update={"init_from": str(tmp_path / "same"), "output_dir": str(out)})
    with pytest.raises(UserError, match=r"^vocab_size: 500, but init_from .* has 400 embeddings"):
        pretrain(same.model_copy(update={"vocab_size": 500}))  # never silently the checkpoint's
    assert not out.exists()
    final = pretrain(
        cfg.model_copy(
            update={"init_from": str(tmp_path / "same"), "output_dir": str(tmp_path / "out")}
        )
    )
    meta = read_metadata(final)
    assert (meta.preset, meta.params) == (
        "bert-tiny",
        sum(p.numel() for p in BertForMaskedLM(shapes["same"]).parameters()),
    )


def test_a_non_finite_metric_fails_the_cell_instead_of_reaching_a_row() -> None:
    class _Task:
        def label(self) -> str:
            return "validation"

    class _Cell:
        task = _Task()

    with pytest.raises(UserError, match=r"non-finite result \(validation val_loss = nan\)"):
        cell_rows(_Cell(), None, [Result("val_loss", float("nan"))], None)  # type: ignore[arg-type]


def test_two_tasks_under_one_label_are_refused(tmp_path: Path, capsys) -> None:
    suite = tmp_path / "dup.yaml"
    suite.write_text(
        "name: dup\nmodels:\n  - {preset: bert-tiny, objective: cwt}\n"
        "tasks:\n  - {type: validation}\n  - {type: validation, params: {batches: 2}}\n"
    )
    assert hlm(["validate", str(suite)]) == 2
    assert (
        "tasks[1].name: duplicate task label 'validation' (also tasks[0])"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{steps: 5, steps: 6}", "line 1: invalid YAML (duplicate key 'steps'"),
        ("[" * 3000 + "]" * 3000, "nested too deeply"),
    ],
)
def test_yaml_that_would_be_read_silently_or_crash(text: str, says: str) -> None:
    with pytest.raises(YamlFileError, match=r"x\.yaml") as info:
        parse_yaml(text, Path("x.yaml"))
    assert says in str(info.value)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("steps: yes", "steps: True is a yes/no, not a number"),
        (
            "mlm_probability: 1.0e-12",
            "mlm_probability: Input should be greater than or equal to 0.01",
        ),
        ("corpus: ['']", "corpus: [0] no file matches ''"),
    ],
)
def test_meaningless_values_are_refused(tmp_path: Path, capsys, line: str, says: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(f"preset: bert-tiny\noutput_dir: {tmp_path / 'out'}\n{line}\n")
    assert hlm(["pretrain", "--config", str(config)]) == 2
    assert f"{config}: {says}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_file_named_like_a_pattern_is_that_file(tmp_path: Path, monkeypatch) -> None:
    from zoo.data.corpus import resolve_local

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data[1].txt").write_text("the named file\n")
    (tmp_path / "data1.txt").write_text("a file the pattern would match\n")
    assert resolve_local("data[1].txt") == [Path("data[1].txt")]
    assert resolve_local("data[12].txt") == [Path("data1.txt")]  # no such file: a pattern


def test_publish_leaves_out_stale_result_files_and_refuses_damaged_ones(tmp_path: Path) -> None:
    """The repo gets the rows `hlm leaderboard` shows, without those of a cell the suite no
    longer has; a truncated file is refused by name rather than left out in silence."""
    from harness.publish.hub import publishable_files
    from harness.results.leaderboard import write_cell, write_current_cells
    from tests.harness.results.test_leaderboard import row

    board = tmp_path / "board"
    for cell in ("good", "old", "cut"):
        write_cell(board, cell, [row("m", "val_loss", 1.0)])
    write_current_cells(board, ["good", "cut"])
    assert publishable_files(board) == [board / "cut.parquet", board / "good.parquet"]
    (board / "cut.parquet").write_bytes((board / "cut.parquet").read_bytes()[:40])
    with pytest.raises(UserError, match=rf"1 result file\(s\) do not read: {board}/cut.parquet"):
        publishable_files(board)


@pytest.mark.parametrize("where", ["../elsewhere/p.py", "p.py", "_plugins/p.py"])
def test_plugin_code_a_suite_names_is_an_explicit_choice(
    tmp_path: Path, capsys, monkeypatch, where: str
) -> None:
    """Outside the suite's folder, beside it, in a received leaderboard's `_plugins/`: where
    the file lies grants nothing; its code runs only with --trust-plugins."""
    monkeypatch.setenv("HLM_TRUST_PLUGINS", "0")  # restored after the test, whatever --trust sets
    marker = tmp_path / "ran"
    suites = tmp_path / "suites"
    plugin = suites / where
    plugin.parent.mkdir(parents=True, exist_ok=True)
    plugin.write_text(f"open({str(marker)!r}, 'w').close()\n# {where}\n")
    (suites / "_suite.yaml").write_text(
        f"name: s\nplugins: [{where}]\n"
        "models: [{preset: bert-tiny, objective: cwt}]\ntasks: [{type: validation}]\n"
    )
    assert hlm(["validate", str(suites / "_suite.yaml")]) == 2
    assert "holds code that would run in this process" in capsys.readouterr().err
    assert not marker.exists()  # refused before any of its code ran
    assert hlm(["validate", "--trust-plugins", str(suites / "_suite.yaml")]) == 0
    assert marker.exists()


def test_a_truncated_token_cache_is_built_again(run, tmp_path: Path, monkeypatch) -> None:
    """A `.bin` shorter than its meta.json's token count was read as a shorter corpus; now it
    is noticed and the cache made again, so the run trains on the whole text."""
    from zoo.data.cache import CACHE_ENV, cache_root

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))  # this test's own cache
    pretrain(run.model_copy(update={"output_dir": str(tmp_path / "first")}))
    (target,) = [f for f in (cache_root() / "tokens").iterdir() if (f / "main.bin").is_file()]
    size = (target / "main.bin").stat().st_size
    with (target / "main.bin").open("r+b") as f:
        f.truncate(size // 2)
    pretrain(run.model_copy(update={"output_dir": str(tmp_path / "again")}))
    assert (target / "main.bin").stat().st_size == size


def test_a_partial_metrics_line_does_not_stop_a_resume(run, tmp_path: Path) -> None:
    """A run killed while writing metrics.jsonl leaves half a line: the resume drops it."""
    out = tmp_path / "r"
    shutil.copytree(run.output_dir, out)
    cfg = run.model_copy(update={"output_dir": str(out), "steps": 4, "save_every": 2})
    with (out / "metrics.jsonl").open("a") as f:
        f.write('{"step": 3, "lo')
    shutil.rmtree(out / "final")
    pretrain(cfg.model_copy(update={"overwrite": True}))  # a fresh run with checkpoints
    with (out / "metrics.jsonl").open("a") as f:
        f.write('{"step": 5, "lo')
    pretrain(cfg.model_copy(update={"steps": 6}), resume=True)
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert all(line.startswith("{") and line.endswith("}") for line in lines)


def test_a_damaged_cells_record_is_named(tmp_path: Path, capsys) -> None:
    from harness.results.leaderboard import write_cell
    from tests.harness.results.test_leaderboard import row

    board = tmp_path / "board"
    write_cell(board, "c", [row("m", "val_loss", 1.0)])
    (board / "_cells.json").write_text('["c", ')
    assert hlm(["leaderboard", "board", "--leaderboards", str(tmp_path)]) == 2
    assert f"{board / '_cells.json'}: not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    "marker",
    [
        '{"files": []}',
        '{"files": {"config.json": 3}}',
        '{"files": {"../x": {"bytes": 1, "sha256": "a"}}}',
        "\xff\xfe",
    ],
)
def test_an_odd_commit_marker_is_a_damaged_checkpoint_not_a_traceback(
    tmp_path: Path, marker: str
) -> None:
    from zoo.train.atomic import COMMIT, checkpoint_problem

    (tmp_path / COMMIT).write_bytes(marker.encode("latin-1"))
    assert "does not read" in (checkpoint_problem(tmp_path) or "")


@pytest.mark.parametrize(
    "reads", [{"init_from": "final"}, {"tokenizer": "tokenizer"}], ids=["init-from", "tokenizer"]
)
def test_overwrite_never_clears_what_the_run_reads(run, tmp_path: Path, reads) -> None:
    """`--init-from r/final --output-dir r --overwrite` cleared r, then failed: "checkpoint
    not found: r/final". Every input is checked against the output before anything goes."""
    out = tmp_path / "r"
    shutil.copytree(run.output_dir, out)
    before = _files(out)
    (flag, name), *_ = reads.items()
    update = {"output_dir": str(out), "overwrite": True, flag: str(out / name)}
    if flag == "init_from":
        update["vocab_size"] = None
    with pytest.raises(UserError, match=rf"the run reads --{flag.replace('_', '-')} .*nothing"):
        pretrain(run.model_copy(update=update))
    assert _files(out) == before


def test_a_fine_tuning_never_writes_among_its_input_runs_files(run, tmp_path: Path) -> None:
    """`hlm finetune-causal r/final r/checkpoints` wrote a second run inside the input run;
    a fine-tuning's own folder beside the run's files (as a suite keeps it) stays allowed."""
    from zoo.train.layout import FINETUNED, inputs_at_risk

    out = tmp_path / "r"
    shutil.copytree(run.output_dir, out)
    before = _files(out)
    for target in ("checkpoints", "final/x", "."):
        assert hlm(["finetune-causal", str(out / "final"), str(out / target)]) == 2
    assert _files(out) == before
    assert inputs_at_risk(out / f"{FINETUNED}abc", {"--init-from": str(out / "final")}) == []


def test_overwrite_clears_no_folder_through_a_link(run, tmp_path: Path) -> None:
    real = tmp_path / "real"
    shutil.copytree(run.output_dir, real)
    before = _files(real)
    (tmp_path / "link").symlink_to(real)
    cfg = run.model_copy(update={"output_dir": str(tmp_path / "link"), "overwrite": True})
    with pytest.raises(UserError, match=r"link: is a link; --overwrite clears no folder"):
        pretrain(cfg)
    assert _files(real) == before
