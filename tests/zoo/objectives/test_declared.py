"""What an objective declares: the loss options it reads are the only ones that change its
loss, and the others, set, are refused by the run config (they would give another key)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from pydantic import ValidationError
from torch import nn
from torch.testing import assert_close

from zoo.objectives import OBJECTIVES, LossOptions, Objective, ObjectiveOptions
from zoo.objectives.base import LossInputs, VocabHead
from zoo.train.config import PretrainConfig

# a value other than the default for every built-in option (each one its loss may read)
OTHER: dict[str, Any] = {
    "temperature": 0.5,
    "duplicates": "mask",
    "cwt_impl": "chunked",
    "ce_impl": "chunked",
    "chunk": 3,
    "negatives": "global",
    "score_dtype": "fp32",
}
BUILTIN = ["ce", "cwt", "ce+cwt", "nce"]


def test_every_option_has_another_value_here() -> None:
    assert sorted(OTHER) == sorted(LossOptions.model_fields)  # a new option gets one here
    for name, value in OTHER.items():
        assert value != LossOptions.model_fields[name].default


def _inputs(objective: Objective) -> LossInputs:
    """K = 7 positions with a repeated target (so `duplicates` matters), D = 8, V = 20."""
    g = torch.Generator().manual_seed(0)
    emb = nn.Embedding(20, 8)
    with torch.no_grad():
        emb.weight.copy_(torch.randn(20, 8, generator=g))
    hidden = torch.randn(7, 8, generator=g)  # (K, D)
    targets = torch.tensor([1, 4, 4, 9, 12, 4, 17])  # (K,)
    head = VocabHead(torch.tanh, emb.weight, torch.randn(20, generator=g))
    return LossInputs(
        hidden,
        targets,
        emb,
        head=head if objective.needs_head else None,
        output_embeddings=torch.randn(20, 8, generator=g)
        if objective.needs_output_embeddings
        else None,
    )


def _loss(name: str, **options: Any) -> torch.Tensor:
    """The loss given every built-in option (`LossOptions`, a superset of each objective's
    model), so that one its model lacks can be set too."""
    objective = OBJECTIVES.get(name)
    return objective.loss(_inputs(objective), LossOptions(**options))["loss"]


@pytest.mark.parametrize("name", BUILTIN)
def test_an_option_an_objective_does_not_read_leaves_its_loss_as_it_is(name: str) -> None:
    """The options model is true: were it to leave out an option the loss does read, the
    config would refuse a setting that changes the weights; this would fail first."""
    unread = [o for o in OTHER if o not in OBJECTIVES.get(name).options.model_fields]
    assert (name in ("ce+cwt",)) == (not unread)  # ce+cwt reads them all
    base = _loss(name)
    for option in unread:
        assert_close(_loss(name, **{option: OTHER[option]}), base, rtol=0, atol=0, msg=option)


@pytest.mark.parametrize("name", ["cwt", "nce"])
def test_the_contrastive_options_do_change_a_contrastive_loss(name: str) -> None:
    """The check above can fail: the options a contrastive loss reads change it."""
    base = _loss(name)
    for option in ("temperature", "duplicates"):
        assert not torch.equal(_loss(name, **{option: OTHER[option]}), base), option


def test_lacks_names_the_options_outside_the_model_set_away_from_their_defaults() -> None:
    ce = OBJECTIVES.get("ce")
    assert ce.lacks({}) == []
    assert ce.lacks({"temperature": 1.0, "ce_impl": "chunked"}) == []  # a default: no matter
    assert ce.lacks({"temperature": 0.5, "negatives": "global"}) == ["temperature", "negatives"]
    assert OBJECTIVES.get("ce+cwt").lacks({"temperature": 0.5}) == []
    assert ce.lacks({"margin": 0.0}) == []  # no option of ours: an unknown key to pydantic
    with pytest.raises(ValidationError, match=r"margin\n  Extra inputs are not permitted"):
        ce.read_options({"margin": 0.0})


def test_each_objective_holds_only_the_options_it_reads() -> None:
    """A plugin's options model starts empty (`ObjectiveOptions`), not with seven it ignores;
    reading a record of the old shape drops the built-ins it lacks at their defaults."""
    assert set(ObjectiveOptions.model_fields) == set()
    assert set(OBJECTIVES.get("ce").options.model_fields) == {"ce_impl", "chunk", "score_dtype"}
    read = OBJECTIVES.get("ce").read_options({**LossOptions().model_dump(), "chunk": 64})
    assert read.model_dump() == {"chunk": 64, "score_dtype": "autocast", "ce_impl": "plain"}
    with pytest.raises(ValueError, match=r"'ce' does not read temperature \(it reads ce_impl"):
        OBJECTIVES.get("ce").read_options({"temperature": 0.5})


@pytest.mark.parametrize(
    ("objective", "loss", "names"),
    [
        ("ce", {"temperature": 0.5}, "temperature"),
        ("ce", {"duplicates": "unique", "negatives": "global"}, "duplicates, negatives"),
        ("cwt", {"ce_impl": "chunked"}, "ce_impl"),
        ("nce", {"ce_impl": "recompute"}, "ce_impl"),
    ],
)
def test_the_run_config_refuses_an_option_its_objective_does_not_read(
    objective: str, loss: dict[str, Any], names: str
) -> None:
    data = {"preset": "bert-tiny", "output_dir": "x", "objective": objective, "loss": loss}
    with pytest.raises(ValueError, match=f"'{objective}' does not read {names} \\(it reads"):
        PretrainConfig.model_validate(data)
    PretrainConfig.model_validate({**data, "objective": "ce+cwt"})  # which reads them all
