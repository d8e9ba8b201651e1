"""A checkpoint folder someone sent: its config.json and tokenizer files are typed and sized
before transformers builds anything from them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.tiny import TINY_RUN
from zoo.errors import UserError
from zoo.tokenizers import load_tokenizer
from zoo.train.atomic import COMMIT
from zoo.train.checkpoint import hf_config
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


@pytest.fixture(scope="module")
def final(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sent") / "r"
    cfg = PretrainConfig(preset="pythia-tiny", objective="ce", output_dir=str(out), steps=1)
    return pretrain(cfg.model_copy(update=TINY_RUN))


def _sent(final: Path, tmp_path: Path, name: str, edit: dict) -> Path:
    """A copy of the checkpoint's JSON files with `edit` merged into file `name` (and no
    commit marker: a sender writes that as well)."""
    folder = tmp_path / "sent"
    folder.mkdir()
    for f in final.glob("*.json"):
        if f.name == COMMIT:
            continue
        (folder / f.name).write_bytes(f.read_bytes())
    data = json.loads((folder / name).read_text())
    data.update(edit)
    (folder / name).write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"num_attention_heads": 0}, "num_attention_heads: Input should be greater than or equal"),
        ({"hidden_size": "64"}, "hidden_size: Input should be a valid integer"),
        ({"max_position_embeddings": 1}, "max_position_embeddings: Input should be greater"),
        ({"vocab_size": 1}, "vocab_size: Input should be greater than or equal to 2"),
        ({"num_hidden_layers": 1_000_000}, "num_hidden_layers: Input should be less than"),
        ({"hidden_size": 65536, "num_hidden_layers": 1000}, "parameters, more than"),
        ({"bos_token_id": 10**9}, "token id 1000000000 is past the vocabulary"),
    ],
)
def test_a_lying_model_config_is_refused_before_a_model_is_built(
    final: Path, tmp_path: Path, edit: dict, message: str
) -> None:
    folder = _sent(final, tmp_path, "config.json", edit)
    began = time.monotonic()
    with pytest.raises(UserError, match=rf"config.json: .*{message}"):
        hf_config(str(folder))
    assert time.monotonic() - began < 30  # refused from the file, not by building


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"model_max_length": "x"}, "model_max_length: "),
    ],
)
def test_a_lying_tokenizer_setting_is_refused(
    final: Path, tmp_path: Path, edit: dict, message: str
) -> None:
    folder = _sent(final, tmp_path, "tokenizer_config.json", edit)
    with pytest.raises(UserError, match=rf"tokenizer_config.json: {message}"):
        load_tokenizer(str(folder))


def test_a_lying_tokenizer_file_is_refused(final: Path, tmp_path: Path) -> None:
    folder = _sent(final, tmp_path, "tokenizer.json", {})
    data = json.loads((folder / "tokenizer.json").read_text())
    cases = {
        "added_tokens: Field required": {k: v for k, v in data.items() if k != "added_tokens"},
        "a vocabulary of 1 entries": {**data, "model": {**data["model"], "vocab": {"a": 0}}},
        "token id 1000000000 is past": {
            **data,
            "model": {**data["model"], "vocab": {"a": 0, "b": 10**9}},
        },
    }
    for message, bad in cases.items():
        (folder / "tokenizer.json").write_text(json.dumps(bad))
        with pytest.raises(UserError, match=rf"tokenizer.json: .*{message}"):
            load_tokenizer(str(folder))
    (folder / "tokenizer.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UserError, match=r"tokenizer.json: nested deeper than"):
        load_tokenizer(str(folder))
