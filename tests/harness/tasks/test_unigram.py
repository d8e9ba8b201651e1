"""The unigram bar of a perplexity (`harness.tasks.unigram`): per token for `validation`, per
target for lm-eval's loglikelihood tasks, from the counts of a checkpoint's training text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness.tasks.unigram import target_perplexity, training_counts, unigram_perplexity
from zoo.data.cache import CorpusSpec, token_streams
from zoo.tokenizers import load_tokenizer


def test_unigram_perplexity() -> None:
    uniform = np.arange(1000) % 10  # every id of 10 as often: perplexity 10 on any of them
    assert unigram_perplexity(
        np.bincount(uniform, minlength=10), np.array([0, 3, 9])
    ) == pytest.approx(10.0)
    skewed = np.array([0] * 98 + [1, 2])  # add-one: p(0) = 99/103
    assert unigram_perplexity(np.bincount(skewed, minlength=3), np.array([0])) == pytest.approx(
        103 / 99
    )


def test_a_targets_perplexity_multiplies_its_tokens_probabilities() -> None:
    """lm-eval's perplexity is per target: exp of the mean of each target's summed negative
    log-likelihood. Two-token targets of a uniform 10-token model: 10 x 10 each."""
    counts = np.full(10, 99)  # add-one: every id 1/10
    assert target_perplexity(counts, [[1, 2], [3, 4]]) == pytest.approx(100.0)
    # one one-token and one two-token target: exp((ln 10 + 2 ln 10) / 2) = 10 ** 1.5
    assert target_perplexity(counts, [[1], [3, 4]]) == pytest.approx(10**1.5)
    assert target_perplexity(counts, [[1, 2]]) == pytest.approx(
        unigram_perplexity(counts, np.array([1, 2])) ** 2
    )


def test_training_counts_are_those_of_the_text_the_checkpoint_records(
    tiny_decoder: Path, tmp_path: Path
) -> None:
    tokenizer = load_tokenizer(str(tiny_decoder))
    counts = training_counts(tiny_decoder, tokenizer)
    assert counts is not None and len(counts) == len(tokenizer)
    meta = json.loads((tiny_decoder / "hlm_metadata.json").read_text())
    whole = CorpusSpec(tuple(meta["config"]["corpus"]))
    everything = token_streams(whole, tokenizer, "decoder").counts("main")
    # the text it trained on: the corpus less the part its config held out for validation
    assert 0 < counts.sum() < everything.sum() and (counts <= everything).all()
    bare = tmp_path / "bare"  # a checkpoint trained elsewhere: no record of its text
    shutil.copytree(tiny_decoder, bare)
    (bare / "hlm_metadata.json").unlink()
    assert training_counts(bare, tokenizer) is None


def test_a_training_text_that_cannot_be_read_gives_no_bar_and_says_why(
    tiny_decoder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A checkpoint copied from a machine with other data: evaluated all the same, without
    the bar (its evaluation is not lost to it), and the log says why."""
    moved = tmp_path / "moved"
    shutil.copytree(tiny_decoder, moved)
    meta_file = moved / "hlm_metadata.json"
    meta = json.loads(meta_file.read_text())
    meta["config"]["corpus"] = ["no-such-corpus"]
    meta_file.write_text(json.dumps(meta))
    with caplog.at_level("WARNING", logger="harness.tasks.unigram"):
        assert training_counts(moved, load_tokenizer(str(moved))) is None
    assert "no unigram bar, its training text cannot be read" in caplog.text
    assert "no-such-corpus" in caplog.text
