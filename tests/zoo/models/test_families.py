"""Model families dispatch through their registered spec: kind, Auto class, spec from config."""

from __future__ import annotations

import pytest
import torch

from zoo.errors import UserError
from zoo.models import FAMILIES, PRESETS, family_of, get_spec, spec_from_hf_config
from zoo.train.checkpoint import load_model


@pytest.mark.parametrize("preset", PRESETS.names())
def test_every_preset_round_trips_through_its_family(preset: str) -> None:
    spec = get_spec(preset, 512)
    assert FAMILIES.get(spec.family) is type(spec)
    config = spec.build().config
    assert family_of(config) is type(spec)
    back = spec_from_hf_config(config, name=preset)
    assert (
        back.hidden_size,
        back.num_layers,
        back.num_heads,
        back.intermediate_size,
        back.vocab_size,
    ) == (spec.hidden_size, spec.num_layers, spec.num_heads, spec.intermediate_size, 512)
    assert back.layer_params() == spec.layer_params()  # its blocks too: FLOPs of a checkpoint


@pytest.mark.parametrize(
    ("preset", "auto", "kind"),
    [
        ("bert-tiny", "MaskedLM", "encoder"),
        ("modernbert-tiny", "MaskedLM", "encoder"),
        ("gpt2-11m", "CausalLM", "decoder"),
    ],
)
def test_a_checkpoint_loads_through_its_family_auto_class(
    tmp_path, preset: str, auto: str, kind: str
) -> None:
    spec = get_spec(preset, 300)
    built = spec.build()
    built.save_pretrained(tmp_path)
    model = load_model(str(tmp_path))
    assert type(model) is type(built) and family_of(model.config).kind == kind
    assert auto in type(spec).auto_class_name == type(spec).auto_class().__name__


def test_an_unknown_model_type_gets_close_matches() -> None:
    class Config:
        model_type = "bertt"

    with pytest.raises(UserError, match=r"unknown model type 'bertt'; did you mean 'bert'"):
        family_of(Config())  # type: ignore[arg-type]


def test_a_grouped_query_family_pretrains_headless(tmp_path) -> None:
    from tests.tiny import TINY_RUN
    from zoo.train.config import PretrainConfig
    from zoo.train.metadata import read_metadata
    from zoo.train.pretrain import pretrain

    cfg = PretrainConfig(
        preset="llama-tiny", objective="cwt", output_dir=str(tmp_path), steps=2, **TINY_RUN
    )
    final = pretrain(cfg)
    model = load_model(str(final))
    assert model.config.num_key_value_heads == 2 and read_metadata(final).family == "llama"


def _one_preset_per_family() -> list[str]:
    firsts: dict[str, str] = {}
    for name in PRESETS.names():
        firsts.setdefault(get_spec(name, 64).family, name)
    return sorted(firsts.values())


@pytest.mark.parametrize("preset", _one_preset_per_family())
def test_body_and_vocab_head_give_the_hugging_face_logits(preset: str) -> None:
    """The spec's body and head are the Hugging Face model's: head(body(x)) is its logits, with
    padding; a headless objective skips exactly the head-only modules."""
    torch.manual_seed(0)
    spec = get_spec(preset, 64)
    model = spec.build().eval()
    ids = torch.randint(2, 64, (2, 9))  # (B, T)
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0  # a padded row
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask).logits  # (B, T, V)
        h = spec.body(model, ids, mask)  # (B, T, D)
        head = spec.vocab_head(model)
        got = head.logits(h.reshape(-1, h.shape[-1])).view_as(want)
    torch.testing.assert_close(got, want)
    assert head.weight is model.get_output_embeddings().weight
    head_params = {id(p) for m in spec.head_only_modules(model) for p in m.parameters()}
    body_params = {id(p) for p in model.base_model.parameters()}
    assert not head_params & body_params
