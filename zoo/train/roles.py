"""The role of each run setting, declared on its field and read from there by every user.

Every field of `zoo.train.config.PretrainConfig` carries one role:

- ``weights``: defines the weights the run produces (seed, data, model, objective and its
  loss options, batch, optimiser constants). Part of the pretraining key; changing it on
  ``--resume`` is refused.
- ``resume``: shapes the weights too (length, learning-rate schedule, budgets), so it is part
  of the key, but a resumed run may change it: the change is applied and recorded in the
  checkpoint's resume history.
- ``runtime``: where and how the run is carried out or observed (device, logging, evaluation
  and checkpoint points, output folder). Never part of the key; free to change on resume.

A field a suite does not set through its ``recipe:`` (its model entry, the seed list or the
cell sets it) says so with ``recipe=False``.

    Field(0, json_schema_extra=role("weights", recipe=False))
    names_with_role(PretrainConfig, "weights")   # ['preset', 'objective', ...]
"""

from __future__ import annotations

from typing import Literal, cast

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonDict

Role = Literal["weights", "resume", "runtime"]
ROLES: tuple[Role, ...] = ("weights", "resume", "runtime")


def role(name: Role, recipe: bool = True, flag: str | None = None) -> JsonDict:
    """A field's `json_schema_extra` declaring its role, whether a suite recipe sets it, and
    its command-line flag where the field's own name would be a false friend (a flag another
    tool gives another meaning)."""
    extra: JsonDict = {"role": name, "recipe": recipe}
    if flag is not None:
        extra["flag"] = flag
    return extra


def flag_of(name: str, field: FieldInfo) -> str:
    """The command-line flag of a config field: its declared `flag`, else --its-name."""
    extra = field.json_schema_extra
    declared = extra["flag"] if isinstance(extra, dict) and "flag" in extra else None
    return "--" + (str(declared) if declared is not None else name.replace("_", "-"))


def _extra(model: type[BaseModel], name: str) -> dict[str, object]:
    extra = model.model_fields[name].json_schema_extra
    if not isinstance(extra, dict) or extra.get("role") not in ROLES:
        raise TypeError(f"{model.__name__}.{name} declares no role (zoo.train.roles.role)")
    return cast(dict[str, object], extra)


def role_of(model: type[BaseModel], name: str) -> Role:
    """The declared role of `model`'s field `name`."""
    return cast(Role, _extra(model, name)["role"])


def names_with_role(model: type[BaseModel], *roles: Role) -> list[str]:
    """The fields of `model` whose role is one of `roles`, in declaration order."""
    return [name for name in model.model_fields if role_of(model, name) in roles]


def recipe_names(model: type[BaseModel]) -> list[str]:
    """The fields a suite's `recipe:` may set (and sweep)."""
    return [name for name in model.model_fields if _extra(model, name)["recipe"] is not False]
