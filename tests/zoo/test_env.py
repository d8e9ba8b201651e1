"""`zoo.env.env_set`: a variable set for one block, its earlier value or absence restored."""

from __future__ import annotations

import os

import pytest

from zoo.env import env_set


def test_a_variable_is_set_within_the_block_only(monkeypatch) -> None:
    monkeypatch.setenv("HLM_TEST_ENV", "before")
    monkeypatch.delenv("HLM_TEST_ABSENT", raising=False)
    with env_set("HLM_TEST_ENV", "inside"), env_set("HLM_TEST_ABSENT", "inside"):
        assert os.environ["HLM_TEST_ENV"] == os.environ["HLM_TEST_ABSENT"] == "inside"
    assert os.environ["HLM_TEST_ENV"] == "before" and "HLM_TEST_ABSENT" not in os.environ
    with pytest.raises(KeyError), env_set("HLM_TEST_ENV", "inside"):
        raise KeyError("however the block ends")
    assert os.environ["HLM_TEST_ENV"] == "before"
