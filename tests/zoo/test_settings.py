"""Every block of settings a person writes checks its numbers once for all: no yes/no where a
number is meant, no infinite or NaN float; a new task type, objective or section inherits it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from harness.suite.schema import ModelEntry, PublishStep, RecipeOverrides, Suite, TaskEntry
from harness.tasks import TASKS
from zoo.objectives import OBJECTIVES
from zoo.settings import Settings, holds_numbers, holds_texts, is_number
from zoo.train.budgets import BudgetMarks
from zoo.train.config import PretrainConfig
from zoo.train.finetune_settings import CausalFinetuneConfig


def written_by_people() -> list[type[BaseModel]]:
    """The run config, suites' entries, and every registered task type's and objective's
    own parameters."""
    fixed: list[type[BaseModel]] = [
        PretrainConfig,
        CausalFinetuneConfig,
        BudgetMarks,
        Suite,
        ModelEntry,
        TaskEntry,
        PublishStep,
        RecipeOverrides,
    ]
    tasks = [TASKS.get(name).params for name in TASKS.names()]
    return fixed + tasks + [OBJECTIVES.get(name).options for name in OBJECTIVES.names()]


MODELS = written_by_people()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_model_people_write_is_settings(model: type[BaseModel]) -> None:
    assert issubclass(model, Settings)


def _numbers(model: type[BaseModel], test: Callable[[Any], bool]) -> list[tuple[str, bool]]:
    """(field, holds floats) for each field of `model` whose type passes `test`."""
    return [
        (name, "float" in str(f.annotation))
        for name, f in model.model_fields.items()
        if test(f.annotation)
    ]


def _errors_at(model: type[BaseModel], name: str, value: object) -> list[str]:
    with pytest.raises(ValidationError) as info:
        model.model_validate({name: value})
    return [e["msg"] for e in info.value.errors() if e["loc"][:1] == (name,)]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_yes_no_or_an_infinite_number_is_refused_by_field(model: type[BaseModel]) -> None:
    """`steps: yes` would be 1 and `lr: yes` 1.0; `lr: .inf` a run that diverges at once."""
    checked = _numbers(model, is_number)
    for name, floats in checked:
        assert any("is a yes/no, not a number" in m for m in _errors_at(model, name, True)), name
        if floats:
            for bad in (math.inf, math.nan):
                assert any("finite number" in m for m in _errors_at(model, name, bad)), name
    lists = _numbers(model, holds_numbers)  # seeds: [yes, no] would be seeds 1 and 0
    for name, _ in lists:
        errors = _errors_at(model, name, [0.5, True])
        assert any("is a yes/no, not a number" in m for m in errors), (name, errors)
    if model in (PretrainConfig, CausalFinetuneConfig, TaskEntry):
        assert checked  # the test reaches real fields, not an empty list
    if model in (PretrainConfig, Suite, TaskEntry, BudgetMarks):
        assert lists


def test_is_number_tells_numbers_from_yes_no_and_text() -> None:
    assert is_number(int) and is_number(float) and is_number(int | None)
    assert is_number(int | str) and is_number(Annotated[int, Field(gt=0)])
    assert not is_number(bool) and not is_number(bool | int) and not is_number(str)
    assert not is_number(list[int]) and not is_number(Literal["a", "b"]) and not is_number(dict)
    assert holds_numbers(list[int]) and holds_numbers(tuple[float, float] | None)
    assert not holds_numbers(list[str]) and not holds_numbers(int) and not holds_numbers(list[bool])


def test_a_yes_no_still_sets_a_yes_no_field_and_text_numbers_still_read() -> None:
    class Example(Settings):
        flag: bool = False
        rate: float = 1.0
        count: int | None = None

    got = Example.model_validate({"flag": True, "rate": "1e-4", "count": "3"})
    assert (got.flag, got.rate, got.count) == (True, 1e-4, 3)
    with pytest.raises(ValidationError, match="extra"):
        Example.model_validate({"flagg": True})


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_one_text_stands_for_a_list_of_one_where_a_list_of_text_is_read(
    model: type[BaseModel],
) -> None:
    """`corpus: FILE` in YAML as `--corpus FILE` on the command line: the list of one, not a
    type error; every such field of every model people write reads it the same way."""
    for name, f in model.model_fields.items():
        if holds_texts(f.annotation):
            assert not any("valid list" in m for m in _errors_at_or_none(model, name)), name
    if model in (PretrainConfig, Suite, TaskEntry):
        assert any(holds_texts(f.annotation) for f in model.model_fields.values())


def _errors_at_or_none(model: type[BaseModel], name: str) -> list[str]:
    try:
        model.model_validate({name: "x"})
    except ValidationError as exc:
        return [e["msg"] for e in exc.errors() if e["loc"][:1] == (name,)]
    return []


def test_holds_texts_tells_lists_of_text_from_text_and_numbers() -> None:
    assert holds_texts(list[str]) and holds_texts(list[str] | None)
    assert holds_texts(Annotated[list[str], Field(min_length=1)])
    assert not holds_texts(str) and not holds_texts(list[int]) and not holds_texts(str | list[str])
    assert not holds_texts(dict[str, str]) and not holds_texts(tuple[str, str])

    class Example(Settings):
        sources: list[str] = Field(default_factory=list)
        seeds: list[int] = Field(default_factory=list)

    assert Example.model_validate({"sources": "a.txt"}).sources == ["a.txt"]
    with pytest.raises(ValidationError, match="valid list"):
        Example.model_validate({"seeds": 3})  # three seeds, or seed 3? refused
