"""Names from data escaped for where they land, and refused at their source when they hold a
control character."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from zoo.errors import UserError
from zoo.text import control_in, has_control, md_cell, md_code, terminal, visible

HOSTILE = [
    "name\n# Fake heading",
    "name\r\n---\nlicense: x",
    "name\x1b[2J\x1b]0;owned\x07",
    "tab\there",
    "sep\u2028line",
    "c1\x9bcontrol",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_every_target_gets_one_printable_line(text: str) -> None:
    assert has_control(text)
    for out in (md_cell(text), md_code(text), terminal(text), visible(text)):
        assert not has_control(out) and "\n" not in out


def test_a_table_cell_cannot_close_itself_or_open_html() -> None:
    assert md_cell("a|b") == "a\\|b"
    assert md_cell("<script>") == "&lt;script>"
    assert md_code("x`|y") == "x'\\|y"
    assert md_cell("bert-tiny-ce") == "bert-tiny-ce"  # a plain name is unchanged


def test_control_in_finds_keys_values_and_nesting_but_lets_prose_span_lines() -> None:
    assert control_in({"models": [{"preset": "ok"}, {"preset": "x\ny"}]}) == (
        "models[1].preset",
        "x\ny",
    )
    assert control_in({"a\tb": 1}) == ("<root>", "a\tb")
    assert control_in({"description": "two\nlines"}, frozenset({"description"})) is None
    assert control_in({"description": "an \x1b escape"}, frozenset({"description"})) is not None


def test_a_checkpoints_metadata_naming_a_control_character_is_refused(tmp_path: Path) -> None:
    from tests.tiny import TINY_RUN
    from zoo.train.config import PretrainConfig
    from zoo.train.metadata import read_metadata
    from zoo.train.pretrain import pretrain

    cfg = PretrainConfig(preset="bert-tiny", output_dir=str(tmp_path / "r"), steps=1, **TINY_RUN)
    src = pretrain(cfg)
    ckpt = tmp_path / "c"
    shutil.copytree(src, ckpt)
    meta = json.loads((ckpt / "hlm_metadata.json").read_text())
    meta["preset"] = "bert-tiny\n| injected | row |"
    (ckpt / "hlm_metadata.json").write_text(json.dumps(meta))
    with pytest.raises(UserError, match=r"preset.*control character"):
        read_metadata(ckpt)
