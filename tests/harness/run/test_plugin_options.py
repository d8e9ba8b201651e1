"""A plugin objective with options of its own goes everywhere a built-in one does: its
`--loss.NAME` flags, the run's config.yaml (fed back with `--config`, bit for bit), a suite's
sweep, a resume, the leaderboard rows, the model card and the memory probe."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml
from safetensors.torch import load_file

from harness.bench.probe import probe
from harness.bench.stepper import variant
from harness.cli import main
from harness.publish.cards import CardOptions, model_card
from harness.results.leaderboard import read_leaderboard
from harness.run.runner import run_suite
from zoo.errors import UserError
from zoo.objectives import OBJECTIVES
from zoo.registry import load_plugin
from zoo.train.metadata import read_metadata

ROOT = Path(__file__).parents[3]
PLUGIN = str(ROOT / "examples" / "cosine_cwt.py")
TINY = ["--preset", "bert-tiny", "--steps", "3", "--batch-size", "2", "--seq-len", "32"]
TINY += ["--vocab-size", "300", "--corpus", "synthetic:100", "--no-progress"]


def hlm(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(argv))
        except SystemExit as exc:
            rc = int(exc.code or 0)
    return rc, out.getvalue(), err.getvalue()


def test_plugin_options_are_flags_and_round_trip_through_config_yaml(tmp_path: Path) -> None:
    rc, out, _ = hlm("pretrain", "--plugins", PLUGIN, "--help")
    assert rc == 0 and "--loss.margin" in out
    a, b = tmp_path / "a", tmp_path / "b"
    args = ["--plugins", PLUGIN, "--objective", "cosine-cwt", "--loss.margin", "0.25"]
    first = [*args, "--loss.temperature", "0.1", "--save-every", "2", *TINY]
    rc, _, err = hlm("pretrain", *first, "--output-dir", str(a))
    assert rc == 0, err
    saved = yaml.safe_load((a / "config.yaml").read_text())
    assert saved["loss"]["margin"] == 0.25 and saved["loss"]["temperature"] == 0.1
    assert read_metadata(a / "final").loss["margin"] == 0.25
    assert read_metadata(a / "final").config["loss"]["margin"] == 0.25
    # the run's own config.yaml is a config: the same run, bit for bit
    rc, _, err = hlm("pretrain", "--config", str(a / "config.yaml"), "--output-dir", str(b))
    assert rc == 0, err
    wa, wb = (
        load_file(a / "final" / "model.safetensors"),
        load_file(b / "final" / "model.safetensors"),
    )
    assert wa.keys() == wb.keys() and all(wa[k].equal(wb[k]) for k in wa)
    # an option the chosen objective does not have is refused, naming it
    rc, _, err = hlm("pretrain", "--loss.margin", "0.2", *TINY, "--output-dir", str(tmp_path / "c"))
    assert rc == 2 and "loss" in err and "margin" in err
    # a changed plugin option is a changed run: refused on resume
    rc, _, err = hlm("pretrain", *args[:-1], "0.5", *TINY, "--output-dir", str(a), "--resume")
    assert rc == 2 and "margin" in err


SUITE = f"""
name: margins
plugins: [{PLUGIN}]
models: [{{preset: bert-tiny, objective: cosine-cwt}}]
recipe: {{corpus: ["synthetic:100"], vocab_size: 300, steps: 2, batch_size: 2, seq_len: 32}}
sweep: {{loss.margin: [0.0, 0.3]}}
tasks: [{{type: validation, params: {{batches: 1}}}}]
"""


def test_a_suite_sweeps_a_plugin_option_into_rows_and_cards(isolated: Path, monkeypatch) -> None:
    monkeypatch.setenv(
        "HLM_TRUST_PLUGINS", "1"
    )  # the example plugin lies outside the suite's folder
    (isolated / "s.yaml").write_text(SUITE)
    assert run_suite(isolated / "s.yaml", root=isolated / "lb", progress=False).failed == []
    df = read_leaderboard(isolated / "lb" / "margins")
    margins = {json.loads(c)["pretrain"]["loss"]["margin"] for c in df["config"]}
    assert margins == {0.0, 0.3}
    assert len({json.loads(c)["pretrain_key"] for c in df["config"]}) == 2
    final = next((isolated / "runs" / "pretrain").glob("*/final"))
    card = model_card(final, "me/m", df.iloc[:0], CardOptions())
    assert "## Training configuration" in card and "margin:" in card
    # which code defined the objective: the plugin file's name and the hash of its contents
    source = read_metadata(final).objective_source
    assert source.startswith("plugin file cosine_cwt.py (sha256 ") and source in card
    assert {json.loads(c)["objective_source"] for c in df["config"]} == {source}


def test_hlm_ls_says_where_a_plugins_objective_comes_from() -> None:
    rc, out, _ = hlm("ls", "--plugins", PLUGIN)
    line = next(x for x in out.splitlines() if x.strip().startswith("cosine-cwt"))
    assert rc == 0 and "from plugin file cosine_cwt.py (sha256 " in line
    builtin = next(x for x in out.splitlines() if x.strip().startswith("cwt "))
    assert "from " not in builtin  # hlm's own: its version is the package's


def test_the_memory_probe_loads_plugins() -> None:
    load_plugin(PLUGIN, trusted=True)
    options = OBJECTIVES.get("cosine-cwt").options.model_validate({"margin": 0.1})
    kw = dict(preset="bert-tiny", vocab=300, batch=2, seq=16, steps=1)
    got = probe("step", plugins=[PLUGIN], variant=variant("cosine-cwt", loss=options), **kw)
    assert got["peak_mb"] > 0
    with pytest.raises(UserError, match="unknown objective 'cosine-cwt'"):
        probe("step", variant=variant("cosine-cwt", loss=options), **kw)


def test_a_misspelt_plugin_option_in_a_config_names_the_option_meant(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"plugins: [{PLUGIN}]\nobjective: cosine-cwt\npreset: bert-tiny\n"
        "loss: {temperatur: 0.1}\n"
    )
    rc, _, err = hlm("pretrain", "--config", str(cfg), "--output-dir", str(tmp_path / "r"))
    assert rc == 2
    assert f"{cfg}: loss: temperatur: unknown key; did you mean 'temperature'?" in err


BESIDE_CE = SUITE.replace(
    "models: [{preset: bert-tiny, objective: cosine-cwt}]",
    "models: [{preset: bert-tiny, objective: cosine-cwt}, {preset: bert-tiny, objective: ce}]",
)


def test_a_plugin_option_sweeps_the_models_that_read_it(isolated: Path, monkeypatch) -> None:
    """A sweep over the plugin's `loss.margin` beside a `ce` model: the plugin's model runs at
    each margin, `ce` (which has no margin) once; `sweep_models` narrows a sweep to named
    models, and a name it does not know, or a loss key no covered model reads, is refused."""
    from harness.run.cells import expand
    from harness.suite import load_suite

    monkeypatch.setenv("HLM_TRUST_PLUGINS", "1")
    path = isolated / "s.yaml"
    path.write_text(BESIDE_CE)
    cells = expand(load_suite(path))
    per_model = {m: [c.sweep for c in cells if c.label == m] for m in {c.label for c in cells}}
    assert per_model == {
        "bert-tiny-cosine-cwt": [{"loss.margin": 0.0}, {"loss.margin": 0.3}],
        "bert-tiny-ce": [{}],
    }
    swept = BESIDE_CE.replace("sweep: {loss.margin: [0.0, 0.3]}", "sweep: {lr: [1.0e-3, 2.0e-3]}")
    path.write_text(swept + "sweep_models: [bert-tiny-ce]\n")
    cells = expand(load_suite(path))
    assert len([c for c in cells if c.label == "bert-tiny-ce"]) == 2
    assert [c.sweep for c in cells if c.label == "bert-tiny-cosine-cwt"] == [{}]
    path.write_text(BESIDE_CE + "sweep_models: [bert-tiny-ce]\n")
    rc, _, err = hlm("validate", str(path))
    assert rc != 0 and "sweep.loss.margin: no model the sweep covers reads it" in err
    path.write_text(BESIDE_CE + "sweep_models: [bert-tiny-cosine]\n")
    rc, _, err = hlm("validate", str(path))
    assert rc != 0 and "sweep_models[0]: unknown model 'bert-tiny-cosine'" in err
