"""zoo.errors: how a validation error reads, and the key an unknown key stood for."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field, ValidationError

from zoo.errors import did_you_mean, key_path, unknown_key_hint, validation_problems
from zoo.settings import Settings


class Inner(Settings):
    duplicates: str = "keep"
    margin: float = 0.0


class Entry(Settings):
    preset: str | None = None
    objective: str | None = None
    options: Inner | None = None


class Root(Settings):
    models: list[Entry] = Field(default_factory=list)
    named: dict[str, Inner] = Field(default_factory=dict)
    seeds: Annotated[list[int], Field(min_length=1)] = Field(default_factory=lambda: [0])


def problems_of(data: dict, model: type | None = Root) -> list[str]:
    with pytest.raises(ValidationError) as err:
        Root.model_validate(data)
    return validation_problems(err.value, "s.yaml", model=model)


def test_a_misspelt_key_names_the_key_meant_at_its_depth() -> None:
    got = problems_of(
        {
            "sedes": [1],
            "models": [{"objectiv": "cwt"}, {"options": {"duplicate": "mask"}}],
            "named": {"a": {"margn": 1}},
        }
    )
    assert sorted(got) == [
        "s.yaml: models[0].objectiv: unknown key; did you mean 'objective'?",
        "s.yaml: models[1].options.duplicate: unknown key; did you mean 'duplicates'?",
        "s.yaml: named.a.margn: unknown key; did you mean 'margin'?",
        "s.yaml: sedes: unknown key; did you mean 'seeds', 'models'?",
    ]


def test_a_key_of_a_section_below_is_named_with_its_section() -> None:
    got = problems_of({"models": [{"duplicates": "mask"}]})
    assert got == ["s.yaml: models[0].duplicates: unknown key; did you mean 'options.duplicates'?"]


def test_with_nothing_close_the_few_keys_there_are_listed() -> None:
    got = problems_of({"models": [{"zzz": 1}]})
    assert got == ["s.yaml: models[0].zzz: unknown key (the keys here: objective, options, preset)"]


def test_without_the_model_an_unknown_key_is_only_called_so() -> None:
    assert problems_of({"sedes": [1]}, model=None) == ["s.yaml: sedes: unknown key"]


def test_a_place_that_does_not_resolve_gives_no_hint() -> None:
    assert unknown_key_hint(Root, ("seeds", 0, "x")) == ""
    assert unknown_key_hint(Root, ("named", "a", "margin", "x")) == ""


def test_a_union_members_tag_in_the_location_is_passed_by() -> None:
    assert unknown_key_hint(Root, ("models", 0, "Entry", "objectiv")) == (
        "; did you mean 'objective'?"
    )


def test_key_path_and_did_you_mean() -> None:
    assert key_path(("models", 0, "recipe", "lr")) == "models[0].recipe.lr"
    assert key_path(()) == "<root>"
    assert did_you_mean("cwtt", ["ce", "cwt"]) == "; did you mean 'cwt'?"
    assert did_you_mean("zzz", ["ce", "cwt"]) == ""
