"""Training as named stages, each testable alone: tokenizer, resume point, strict weights,
stopping rule, typed loss options and the objective's declared options and FLOP cost."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from zoo.errors import UserError
from zoo.flops import loss_forward_flops
from zoo.models import get_spec
from zoo.objectives import OBJECTIVES, ContrastiveOptions, LossShape, Objective
from zoo.registry import load_plugin
from zoo.tokenizers import load_tokenizer
from zoo.train.checkpoint import load_weights
from zoo.train.config import PretrainConfig, load_config
from zoo.train.pretrain import pretrain
from zoo.train.resume import resume_point
from zoo.train.run import Counters, StopRule

ROOT = Path(__file__).parents[3]
TINY = dict(corpus=["synthetic:300"], steps=3, batch_size=4, seq_len=32, progress=False)


def test_stop_rule() -> None:
    rule = StopRule(max_steps=3)
    assert not rule.done(Counters(step=2)) and rule.done(Counters(step=3))


def test_a_reused_output_folder_gets_the_new_tokenizer(tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    pretrain(
        PretrainConfig(preset="bert-tiny", objective="cwt", output_dir=out, vocab_size=600, **TINY)
    )
    assert len(load_tokenizer(out + "/tokenizer")) == 600
    again = PretrainConfig(
        preset="bert-tiny", objective="cwt", output_dir=out, vocab_size=300, **TINY
    )
    with pytest.raises(UserError, match="holds a run already"):  # never a silent mix of two runs
        pretrain(again)
    pretrain(again.model_copy(update={"overwrite": True}))
    assert len(load_tokenizer(out + "/tokenizer")) == 300  # was kept stale at 600


def test_resume_with_only_final_is_refused(tmp_path: Path) -> None:
    (tmp_path / "final").mkdir()
    with pytest.raises(UserError, match="final holds a finished run"):
        resume_point(tmp_path, resume=True)
    with pytest.raises(UserError, match="no checkpoint with training state"):
        resume_point(tmp_path / "empty", resume=True)
    assert resume_point(tmp_path, resume=False) is None


def test_weights_load_strictly_except_tied_keys(tmp_path: Path) -> None:
    spec = get_spec("bert-tiny", 300)
    model = spec.build()
    model.save_pretrained(tmp_path)  # the tied head is saved once
    load_weights(spec.build(), tmp_path)
    state = load_file(str(tmp_path / "model.safetensors"))
    save_file({**state, "bert.extra.weight": torch.zeros(2)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(UserError, match=r"unexpected: bert\.extra\.weight"):
        load_weights(spec.build(), tmp_path)
    del state["bert.embeddings.word_embeddings.weight"]
    save_file(state, str(tmp_path / "model.safetensors"))
    with pytest.raises(UserError, match=r"missing: .*word_embeddings"):
        load_weights(spec.build(), tmp_path)


def test_loss_options_are_one_nested_typed_model(tmp_path: Path) -> None:
    cfg = load_config(
        None,
        {
            "preset": "bert-tiny",
            "output_dir": "x",
            "loss": {"duplicates": "mask", "temperature": None},
        },
    )
    assert isinstance(cfg.loss, ContrastiveOptions) and cfg.loss.duplicates == "mask"
    with pytest.raises(
        UserError, match=r"^command line: loss: temperature: Input should be greater than 0"
    ):
        load_config(None, {"preset": "bert-tiny", "output_dir": "x", "loss": {"temperature": 0}})
    f = tmp_path / "c.yaml"
    f.write_text("preset: bert-tiny\noutput_dir: x\nloss: {duplicates: maybe}\n")
    with pytest.raises(UserError, match=rf"^{f}: loss: duplicates: Input should be 'keep'"):
        load_config(str(f), {})


@pytest.mark.usefixtures("trust_plugins")
def test_a_plugin_objective_takes_its_own_options_from_the_config(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    plugin = ROOT / "examples" / "cosine_cwt.py"
    f.write_text(
        f"preset: bert-tiny\nobjective: cosine-cwt\noutput_dir: x\nplugins: [{plugin}]\nloss: "
        f"{{temperature: 0.1}}\n"
    )
    cfg = load_config(str(f), {}, trust_plugins=True)
    assert type(cfg.loss).__name__ == "CosineOptions" and cfg.loss.temperature == 0.1
    default = load_config(
        None, {"preset": "bert-tiny", "objective": "cosine-cwt", "output_dir": "x"}
    )
    assert type(default.loss).__name__ == "CosineOptions" and default.loss.temperature == 0.05
    f.write_text(
        f"preset: bert-tiny\nobjective: cosine-cwt\noutput_dir: x\nplugins: [{plugin}]\nloss: "
        f"{{temperature: -1}}\n"
    )
    with pytest.raises(UserError, match=r"loss: temperature: Input should be greater than 0"):
        load_config(str(f), {}, trust_plugins=True)


def test_an_objective_declares_its_flop_cost() -> None:
    def free(s: LossShape) -> float:
        return 7.0

    load_plugin(ROOT / "examples" / "cosine_cwt.py", trusted=True)
    spec = get_spec("bert-tiny", 1000)
    obj = Objective("free", OBJECTIVES.get("cwt").loss, needs_head=False, flops=free)
    assert loss_forward_flops(spec, obj, 64) == 7.0  # was charged 2 K^2 D for every non-ce name
    assert (
        loss_forward_flops(spec, OBJECTIVES.get("ce"), 64)
        == 2.0 * 64 * 128 * 1000 + 2.0 * 64 * 128 * 128
    )
    assert loss_forward_flops(spec, OBJECTIVES.get("cosine-cwt"), 64) == 2.0 * 64 * 64 * 128


def test_an_unreachable_vocabulary_is_an_error_or_a_loud_warning(tmp_path: Path) -> None:
    big = dict(TINY, vocab_size=20_000, corpus=["synthetic:100"])
    with pytest.raises(
        UserError,
        match=r"^vocab_size: the tokenizer trained on synthetic:100 reaches only \d+ entries, "
        "not 20000",
    ):
        pretrain(
            PretrainConfig(
                preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "a"), **big
            )
        )
    with pytest.warns(UserWarning, match="out of reach"):
        final = pretrain(
            PretrainConfig(
                preset="pythia-tiny",
                objective="cwt",
                output_dir=str(tmp_path / "b"),
                allow_smaller_vocab=True,
                **big,
            )
        )
    from zoo.train.metadata import read_metadata

    meta = read_metadata(final)
    assert meta.vocab_size == meta.tokenizer.vocab_size < 20_000  # no dead embedding rows


def test_a_given_tokenizer_decides_the_vocabulary(tmp_path: Path) -> None:
    from zoo.train.metadata import read_metadata

    first = pretrain(
        PretrainConfig(
            preset="bert-tiny",
            objective="cwt",
            output_dir=str(tmp_path / "a"),
            vocab_size=500,
            **TINY,
        )
    )
    meta = read_metadata(
        pretrain(
            PretrainConfig(
                preset="bert-tiny",
                objective="cwt",
                output_dir=str(tmp_path / "b"),
                tokenizer=str(first),
                **TINY,
            )
        )
    )
    assert meta.vocab_size == 500 and meta.tokenizer.source == str(first)  # not the preset's 4096


@pytest.mark.parametrize(
    ("objective", "bf16", "refused"),
    [("cwt", True, True), ("ce", True, False), ("cwt", False, False)],
)
def test_a_bf16_run_started_before_score_dtype_resumes_only_where_it_multiplies_as_then(
    tmp_path: Path, objective: str, bf16: bool, refused: bool
) -> None:
    """Its config.yaml lacks `loss.score_dtype`: a headless bf16 run multiplied its scores in
    fp32 then and in bf16 now, so it is refused; the plain vocabulary loss, or any fp32 run,
    computes as it did and resumes."""
    import yaml

    from zoo.train.resume import resume_changes

    cfg = PretrainConfig(preset="bert-tiny", objective=objective, bf16=bf16, output_dir="x")
    given = cfg.as_given()
    old = {**given, "loss": {k: v for k, v in given["loss"].items() if k != "score_dtype"}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(old))
    step = tmp_path / "checkpoints" / "step-0000002"
    if refused:
        with pytest.raises(UserError, match=r"before `loss\.score_dtype` existed"):
            resume_changes(cfg, tmp_path, step)
    else:
        assert resume_changes(cfg, tmp_path, step) == {}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(given))  # started with the option
    assert resume_changes(cfg, tmp_path, step) == {}
