"""The pretraining key's rule: a setting keys only where it differs from its pinned baseline."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field, create_model

from zoo.objectives.declared import LossOptions
from zoo.registry import load_plugin
from zoo.train import identity
from zoo.train.config import PretrainConfig
from zoo.train.roles import names_with_role, role

ROOT = Path(__file__).parents[3]


def _cfg(cls: type[PretrainConfig] = PretrainConfig, **kw: object) -> PretrainConfig:
    return cls(preset="bert-tiny", objective="cwt", output_dir="x", **kw)


def test_every_keyed_setting_has_a_baseline_or_is_keyed_always() -> None:
    """A setting added to the key pins its first default in `BASELINE`: a later change of
    that default then keys exactly the runs that take it."""
    keyed = set(names_with_role(PretrainConfig, "weights", "resume"))
    assert keyed == identity.KEYED_ALWAYS | set(identity.BASELINE), (
        "pin each new weights/resume setting's first default in zoo.train.identity.BASELINE"
    )
    assert not identity.KEYED_ALWAYS & set(identity.BASELINE)
    options = set(LossOptions.model_fields)
    assert options == identity.LOSS_KEYED_ALWAYS | set(identity.LOSS_BASELINE)
    assert not identity.LOSS_KEYED_ALWAYS & set(identity.LOSS_BASELINE)


def test_runtime_settings_never_key_and_always_keyed_ones_do_at_their_default() -> None:
    plain = _cfg()
    assert plain.key_fields()["seed"] == 0  # keyed before the rule: kept at its default
    assert _cfg(log_every=7, device="cpu").key_fields() == plain.key_fields()
    assert _cfg(seed=1).key_fields() != plain.key_fields()


def test_a_new_setting_keys_only_off_its_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    wider = create_model(
        "WiderConfig",
        __base__=PretrainConfig,
        knob=(int, Field(5, json_schema_extra=role("weights"))),
    )
    assert "knob" not in _cfg(wider).key_fields()  # unpinned: its default now is its baseline
    assert _cfg(wider, knob=6).key_fields()["knob"] == 6
    assert _cfg(wider).key_fields() == _cfg().key_fields()
    # its default moved from the pinned first one: the runs that take the new default key it
    monkeypatch.setitem(identity.BASELINE, "knob", 0)
    assert _cfg(wider).key_fields()["knob"] == 5
    assert "knob" not in _cfg(wider, knob=0).key_fields()


def test_score_dtype_keys_under_bf16_only() -> None:
    assert "score_dtype" not in _cfg().key_fields()["loss"]
    assert _cfg(bf16=True).key_fields()["loss"]["score_dtype"] == "autocast"


def test_a_plugin_objectives_own_options_key_at_every_value() -> None:
    load_plugin(ROOT / "examples" / "cosine_cwt.py", trusted=True)
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cosine-cwt",
        output_dir="x",
        plugins=[str(ROOT / "examples" / "cosine_cwt.py")],
    )
    loss = cfg.key_fields()["loss"]
    assert loss["margin"] == 0.0 and loss["temperature"] == 0.05
