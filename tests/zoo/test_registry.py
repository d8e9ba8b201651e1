from __future__ import annotations

import os

import pytest

from zoo.errors import UserError
from zoo.objectives import OBJECTIVES, DeferredLoss
from zoo.registry import (
    TRUST_ENV,
    Registry,
    load_plugin,
    may_run_code,
    plugins_trusted,
    trusting,
)
from zoo.shipped import SHIPPED_SUITES


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
        "OBJECTIVES.add('test-l2', Objective('test-l2', loss, needs_head=False, "
        "flops=contrastive_flops))\n"
    )
    load_plugin(plugin, trusted=True)
    load_plugin(plugin, trusted=True)  # idempotent
    assert OBJECTIVES.get("test-l2").headless
    copy = tmp_path / "kept" / "my_obj.py"  # as a leaderboard keeps it: the same code
    copy.parent.mkdir()
    copy.write_bytes(plugin.read_bytes())
    load_plugin(copy, trusted=True)  # no second registration
    copy.write_text(copy.read_text() + "# edited\n")
    with pytest.raises(UserError, match=r"my_obj.py changed since this process imported it"):
        load_plugin(copy, trusted=True)
    other = tmp_path / "other.py"  # other code under a name taken: refused by name
    other.write_text(plugin.read_text() + "# another\n")
    with pytest.raises(UserError, match="objective 'test-l2' is already registered"):
        load_plugin(other, trusted=True)


def test_plugin_errors_are_user_errors(tmp_path) -> None:
    with pytest.raises(UserError, match="not found"):
        load_plugin(tmp_path / "missing.py", trusted=True)
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(UserError, match="boom"):
        load_plugin(bad, trusted=True)


def test_builtin_objectives_are_declared_without_torch() -> None:
    """The registry and every objective's options load without torch (what `hlm pretrain
    --help` and config validation need); a built-in's loss is imported at its first use."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom zoo.objectives import OBJECTIVES\nfrom zoo.train.config import SECTIONS\n"
        "assert [o.options for _, o in OBJECTIVES.items()]\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    from zoo.objectives.builtin import ce_loss, ce_plus_cwt, cwt_objective, nce_objective

    losses = {"ce": ce_loss, "cwt": cwt_objective, "ce+cwt": ce_plus_cwt, "nce": nce_objective}
    for name, fn in losses.items():
        loss = OBJECTIVES.get(name).loss
        assert isinstance(loss, DeferredLoss) and loss.resolve() is fn


def test_a_deferred_loss_that_cannot_be_imported_names_itself() -> None:
    with pytest.raises(UserError, match="builtin:no_such_loss' cannot be imported"):
        DeferredLoss("zoo.objectives.builtin:no_such_loss")(None, None)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="no_such_module"):
        DeferredLoss("no_such_module:loss").resolve()


def test_code_a_file_names_runs_only_while_trusted(tmp_path, monkeypatch) -> None:
    """Where the file lies grants nothing (beside a suite, in a received leaderboard); the
    project's own tracked files ship with the code; trust lasts as long as its block."""
    beside = tmp_path / "suites" / "p.py"
    shipped = SHIPPED_SUITES / "lm_eval_tasks" / "flores_utils.py"
    monkeypatch.delenv(TRUST_ENV, raising=False)
    assert not may_run_code(beside) and may_run_code(shipped) and not plugins_trusted()
    with pytest.raises(RuntimeError), trusting():
        assert may_run_code(beside) and plugins_trusted()
        raise RuntimeError("the trust ends with the block, however it ends")
    assert TRUST_ENV not in os.environ and not may_run_code(beside)
    with trusting(False):  # `--trust-plugins` not given: nothing granted
        assert not plugins_trusted()
    with trusting(True), trusting(False):  # a block inside a trusted one keeps its trust
        assert plugins_trusted()
    assert not plugins_trusted()


def test_an_untrusted_plugin_runs_nothing(tmp_path) -> None:
    """Untrusted, a plugin file is refused before its first line runs; code imported
    already (the same bytes) needs no second decision."""
    marker = tmp_path / "ran"
    plugin = tmp_path / "evil.py"
    plugin.write_text(f"open({str(marker)!r}, 'w').close()\n")
    with pytest.raises(UserError, match=r"evil.py holds code .* --trust-plugins"):
        load_plugin(plugin, trusted=False)
    assert not marker.exists()
    load_plugin(plugin, trusted=True)
    marker.unlink()
    load_plugin(plugin, trusted=False)  # imported already: nothing runs again
    assert not marker.exists()
