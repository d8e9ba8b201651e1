"""The run config: every field declares its role, the pretraining key follows the roles, and
YAML -> config -> YAML is the identity (a run's config.yaml is a config `--config` reads)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from harness.run.cells import digest
from zoo.errors import UserError
from zoo.train.config import SECTIONS, PretrainConfig, load_config
from zoo.train.roles import names_with_role, recipe_names, role_of

BASE: dict[str, Any] = {"preset": "bert-tiny", "output_dir": "runs/a"}

# Two valid values per field: the first is the base config's, the second a change.
ALTERNATIVES: dict[str, tuple[Any, Any]] = {
    "plugins": ([], ["examples/cosine_cwt.py"]),
    "objective": ("cwt", "ce"),
    "loss": ({}, {"chunk": 512}),
    "mlm_probability": (0.15, 0.3),
    "sparse_embeddings": (False, True),
    "preset": ("bert-tiny", "bert-small"),
    "tokenizer": (None, "tok"),
    "vocab_size": (None, 2000),
    "allow_smaller_vocab": (False, True),
    "init_from": (None, "runs/x/final"),
    "untie_head": (False, True),
    "freeze_body": (False, True),
    "prune_last_layer": (True, False),
    "attention": ("sdpa", "xformers"),
    "corpus": (["synthetic"], ["synthetic:50"]),
    "validation": (None, ["synthetic:20"]),
    "validation_fraction": (0.02, 0.1),
    "max_documents": (None, 100),
    "seq_len": (None, 64),
    "batch_size": (None, 8),
    "micro_batch_size": (None, 2),
    "micro_tokens": (16384, 4096),
    "seed": (0, 1),
    "lr": (None, 1e-3),
    "weight_decay": (None, 0.1),
    "betas": (None, (0.9, 0.95)),
    "eps": (None, 1e-8),
    "grad_clip": (None, 0.5),
    "bf16": (False, True),
    "fast_dropout": (True, False),
    "flush_denormal": (True, False),
    "max_nonfinite_skips": (3, 5),
    "steps": (None, 100),
    "schedule": (None, "cosine"),
    "warmup_steps": (None, 10),
    "min_lr_ratio": (None, 0.1),
    "max_tokens": (None, 10_000),
    "max_flops": (None, 1e12),
    "max_seconds": (None, 60.0),
    "eval_every": (0, 10),
    "eval_batches": (8, 2),
    "save_every": (0, 10),
    "save_at_steps": ([], [5, 10]),
    "save_at": ({}, {"tokens": [1000]}),
    "log_every": (10, 1),
    "report_to": ([], ["tensorboard"]),
    "output_dir": ("runs/a", "runs/b"),
    "overwrite": (False, True),
    "pretrain_key": (None, "abc"),
    "device": ("auto", "cpu"),
    "strategy": ("ddp", "fsdp"),
    "compile": (False, True),
    "progress": (True, False),
}


def key(cfg: PretrainConfig) -> str:
    return digest(cfg.key_fields())


def test_every_field_has_a_role_and_two_test_values() -> None:
    fields = list(PretrainConfig.model_fields)
    assert sorted(fields) == sorted(ALTERNATIVES)  # a new field gets its values here
    assert sorted(fields) == sorted(n for s in SECTIONS for n in s.model_fields)
    for name in fields:
        assert role_of(PretrainConfig, name) in ("weights", "resume", "runtime")
    # what the issue names: evaluation points and runtime never in the key; bf16 and the
    # dropout masks define the weights; the schedule may change on resume
    runtime = names_with_role(PretrainConfig, "runtime")
    assert {"save_every", "save_at_steps", "save_at", "eval_every", "device", "output_dir"} <= set(
        runtime
    )
    assert {"bf16", "fast_dropout", "loss", "seed"} <= set(
        names_with_role(PretrainConfig, "weights")
    )
    assert {"steps", "lr", "schedule"} <= set(names_with_role(PretrainConfig, "resume"))
    assert "seed" not in recipe_names(PretrainConfig) and "lr" in recipe_names(PretrainConfig)


def config(changed: frozenset[str]) -> PretrainConfig:
    data = {name: ALTERNATIVES[name][name in changed] for name in ALTERNATIVES}
    if "freeze_body" in changed:  # a probe trains a head of its own, on a checkpoint
        data["untie_head"] = True
    if data["untie_head"]:
        data["init_from"] = ALTERNATIVES["init_from"][1]
    if data["init_from"] is not None:  # a checkpoint brings its tokenizer: both are refused
        data["tokenizer"] = None
    if data["init_from"] is not None or data["tokenizer"] is not None:  # their vocabulary
        data["allow_smaller_vocab"] = False
    if data["validation"] is not None:  # nothing held out of the corpus
        data["validation_fraction"] = ALTERNATIVES["validation_fraction"][0]
    return PretrainConfig.model_validate(data)


@settings(max_examples=60, deadline=None)
@given(changed=st.frozensets(st.sampled_from(sorted(ALTERNATIVES)), max_size=6))
def test_the_key_changes_exactly_when_a_key_field_changes(changed: frozenset[str]) -> None:
    base, other = config(frozenset()), config(changed)
    in_key = set(names_with_role(PretrainConfig, "weights", "resume"))
    assert (key(base) != key(other)) == bool(changed & in_key), sorted(changed)


@pytest.mark.parametrize("bf16", [False, True])
def test_the_score_dtype_is_in_the_key_only_where_autocast_runs(bf16: bool) -> None:
    """Without bf16 every product is fp32 whatever `loss.score_dtype` says: the key leaves it
    out (an fp32 run keeps the key it had before the option); under bf16 it defines the run."""
    base = {name: ALTERNATIVES[name][0] for name in ALTERNATIVES} | {"objective": "cwt"}
    keys = {
        d: key(PretrainConfig.model_validate({**base, "bf16": bf16, "loss": {"score_dtype": d}}))
        for d in ("autocast", "fp32")
    }
    assert (keys["autocast"] != keys["fp32"]) == bf16
    unset = key(PretrainConfig.model_validate({**base, "bf16": bf16}))
    assert unset == keys["autocast"]  # the default
    fp32_run = PretrainConfig.model_validate({**base, "bf16": False})
    assert "score_dtype" not in fp32_run.key_fields()["loss"]


@settings(max_examples=60, deadline=None)
@given(changed=st.frozensets(st.sampled_from(sorted(ALTERNATIVES)), max_size=8))
def test_yaml_config_yaml_is_the_identity(changed: frozenset[str]) -> None:
    cfg = config(changed)
    text = yaml.safe_dump(cfg.as_given(), sort_keys=False)
    again = PretrainConfig.model_validate(yaml.safe_load(text))
    assert again == cfg
    assert yaml.safe_dump(again.as_given(), sort_keys=False) == text


def test_a_checkpoint_and_a_tokenizer_are_not_given_together() -> None:
    """`init_from` loads the checkpoint's own tokenizer: a `tokenizer` beside it would be
    ignored, so the pair is refused by key."""
    given = {"preset": "bert-tiny", "output_dir": "x", "init_from": "runs/x/final"}
    assert load_config(None, given).init_from == "runs/x/final"
    with pytest.raises(UserError, match=r"^command line: init_from: the checkpoint brings its"):
        load_config(None, {**given, "tokenizer": "tok"})


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"untie_head": True}, r"untie_head: gives the init_from checkpoint a head of its own"),
        ({"freeze_body": True}, r"freeze_body: trains only an LM head of its own: it needs"),
    ],
)
def test_head_settings_without_what_they_act_on_are_refused(extra: dict, error: str) -> None:
    """A new head needs a checkpoint to put it on, and a probe needs that head: each was
    once accepted and ignored (untie_head) or trained the tied input embeddings instead
    (freeze_body with a tied head)."""

    given = {"preset": "pythia-tiny", "output_dir": "x"}
    with pytest.raises(UserError, match="^command line: " + error):
        load_config(None, {**given, **extra})
    probe = {"init_from": "runs/x/final", "untie_head": True, "freeze_body": True}
    assert load_config(None, {**given, **probe}).freeze_body


# the settings below that are refused only away from their defaults
DEFAULTED = {"mlm_probability", "prune_last_layer", "validation_fraction", "allow_smaller_vocab"}


@pytest.mark.parametrize(
    ("extra", "fine", "error"),
    [
        (
            {"preset": "pythia-tiny", "mlm_probability": 0.3},
            {"preset": "bert-tiny"},
            r"mlm_probability: applies to encoders; pythia-tiny is a decoder \(it predicts",
        ),
        (
            {"preset": "gpt2-11m", "prune_last_layer": False},
            {"preset": "bert-tiny"},
            r"prune_last_layer: applies to encoders; gpt2-11m is a decoder \(every position",
        ),
        (
            {"validation": ["synthetic:20"], "validation_fraction": 0.1},
            {"validation": None},
            r"validation_fraction: applies where validation is unset; the validation sources "
            r"given \(synthetic:20\)",
        ),
        (
            {"tokenizer": "tok", "allow_smaller_vocab": True},
            {"tokenizer": None},
            r"allow_smaller_vocab: applies to a tokenizer trained on the corpus; the given one "
            r"\(tok\)",
        ),
        (
            {"init_from": "runs/x/final", "allow_smaller_vocab": True},
            {"init_from": None},
            r"init_from: the checkpoint brings its own vocabulary: leave allow_smaller_vocab",
        ),
    ],
)
def test_a_setting_the_run_would_not_read_is_refused(extra: dict, fine: dict, error: str) -> None:
    """Each of these was accepted and never read: the run trained the same weights under
    another pretraining key (a duplicate row, an ablation that was none)."""

    given = {"preset": "bert-tiny", "output_dir": "x"}
    with pytest.raises(UserError, match="^command line: " + error):
        load_config(None, {**given, **extra})
    load_config(None, {**given, **extra, **fine})  # where it is read, it is taken
    defaults = {k: PretrainConfig.model_fields[k].default for k in extra if k in DEFAULTED}
    load_config(None, {**given, **extra, **defaults})  # at its default, it changes nothing


def test_one_source_is_a_list_of_one() -> None:
    """`corpus: FILE` in YAML means what `--corpus FILE` means, and keys the same run."""
    one = PretrainConfig.model_validate({**BASE, "corpus": "synthetic:50"})
    listed = PretrainConfig.model_validate({**BASE, "corpus": ["synthetic:50"]})
    assert one.corpus == ["synthetic:50"]
    assert key(one) == key(listed)
    assert PretrainConfig.model_validate({**BASE, "validation": "synthetic:20"}).validation == [
        "synthetic:20"
    ]


@pytest.mark.parametrize("loss", ["[temperature, 2]", "0.1", "temperature"])
def test_a_loss_that_is_not_a_mapping_is_refused_with_the_file(tmp_path: Any, loss: str) -> None:
    """A malformed `loss:` is refused, not dropped in favour of the `--loss.*` flags given."""
    f = tmp_path / "run.yaml"
    f.write_text(f"preset: bert-tiny\nloss: {loss}\n")
    with pytest.raises(UserError, match=r"run\.yaml: loss: should be a mapping"):
        load_config(str(f), {"loss": {"chunk": 256}})
    f.write_text("preset: bert-tiny\noutput_dir: x\nloss: {temperature: 0.5}\n")
    merged = load_config(str(f), {"loss": {"chunk": 256, "duplicates": None}}).loss
    assert (merged.temperature, merged.chunk) == (0.5, 256)


def test_a_renamed_key_still_reads_and_is_written_under_its_new_name() -> None:
    """`save_steps` is `save_at_steps` now, the name of its flag: a config.yaml or a recorded
    suite written before still reads; both names at once is an error."""
    from harness.suite.schema import RecipeOverrides

    base = {"preset": "bert-tiny", "objective": "cwt", "output_dir": "x"}
    cfg = PretrainConfig.model_validate({**base, "save_steps": [5, 10]})
    assert cfg.save_at_steps == [5, 10] and "save_steps" not in cfg.as_given()
    assert RecipeOverrides.model_validate({"save_steps": None}).model_dump() == (
        RecipeOverrides.model_validate({}).model_dump()
    )
    with pytest.raises(ValidationError, match="save_steps and save_at_steps are one setting"):
        PretrainConfig.model_validate({**base, "save_steps": [5], "save_at_steps": [5]})
