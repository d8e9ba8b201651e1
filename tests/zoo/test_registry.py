from __future__ import annotations

import pytest

from zoo.errors import UserError
from zoo.objectives import OBJECTIVES
from zoo.registry import Registry, load_plugin


def test_register_get_and_duplicates() -> None:
    reg: Registry[int] = Registry("thing")

    @reg.register("alpha")
    def _() -> int:
        return 1

    reg.add("beta", 2)
    assert reg.get("beta") == 2
    assert reg.names() == ["alpha", "beta"]
    with pytest.raises(UserError, match="already registered"):
        reg.add("beta", 3)


def test_unknown_name_suggests_close_matches_and_lists_known() -> None:
    with pytest.raises(UserError) as err:
        OBJECTIVES.get("cwtt")
    msg = str(err.value)
    assert "unknown objective 'cwtt'" in msg and "did you mean 'cwt'" in msg
    known = msg.split("(known: ")[1].rstrip(")").split(", ")
    assert {"ce", "ce+cwt", "cwt", "nce"} <= set(known) and known == sorted(known)


def test_plugin_registers_objective_from_user_file(tmp_path) -> None:
    plugin = tmp_path / "my_obj.py"
    plugin.write_text(
        "from zoo.objectives import OBJECTIVES, Objective, contrastive_flops\n"
        "def loss(batch, options):\n"
        "    return {'loss': (batch.hidden ** 2).mean()}\n"
        "OBJECTIVES.add('test-l2', Objective('test-l2', loss, needs_head=False, flops=contrastive_flops))\n"
    )
    load_plugin(plugin)
    load_plugin(plugin)  # idempotent
    assert OBJECTIVES.get("test-l2").headless


def test_plugin_errors_are_user_errors(tmp_path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_plugin(tmp_path / "missing.py")
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(UserError, match="boom"):
        load_plugin(bad)
