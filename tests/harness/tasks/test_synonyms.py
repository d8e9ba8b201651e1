"""The synonyms task (Appendix A): WordNet pairs, cosines against a direct computation, the
paired shift test, the distribution plot, and a run on real text."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import torch
from torch.testing import assert_close

from harness.downstream.wordnet import read_synsets, synonym_pairs, synset_words
from harness.report.plots import plot_distributions
from harness.results.leaderboard import read_leaderboard
from harness.results.samples import read_samples
from harness.results.significance import PER_EXAMPLE, compare_to_baseline
from harness.results.stats import per_example
from harness.run.runner import run_suite
from harness.suite import SuiteError, load_suite
from zoo.tokenizers import train_tokenizer

HEADER = "  1 This software and database is being provided to you, the LICENSEE, by  \n"
LINES = (
    "00001740 03 n 02 Big 0 large 0 000 | above average in size\n"
    "00001741 03 n 03 small 0 little 1 little_bit 0 000 | limited in size\n"
    "00001742 03 a 02 fast(p) 0 quick 0 000 | moving quickly\n"
    "00001743 03 n 01 alone 0 000 | single word: no pair\n"
)


@pytest.fixture
def wordnet(tmp_path: Path) -> Path:
    for pos in ("noun", "verb", "adj", "adv"):
        (tmp_path / f"data.{pos}").write_text(HEADER + (LINES if pos == "noun" else ""))
    return tmp_path


def test_wordnet_lines_and_pairs(wordnet: Path, data_root: Path) -> None:
    assert synset_words(LINES.splitlines()[1]) == ["small", "little"]  # little_bit dropped
    assert synset_words(LINES.splitlines()[2]) == ["fast", "quick"]  # marker removed
    assert synonym_pairs(wordnet) == [("big", "large"), ("fast", "quick"), ("little", "small")]
    real = synonym_pairs(data_root / "wordnet")
    assert ("big", "large") in real and len(read_synsets(data_root / "wordnet", ("adv",))) > 500


def test_pair_cosines_equal_a_direct_computation() -> None:
    from harness.tasks.synonyms import pair_cosines, single_token, single_tokens

    text = ["big large small little fast quick " * 20]
    tok = train_tokenizer(text, 64, "encoder")
    g = torch.Generator().manual_seed(0)
    emb = torch.randn(len(tok), 8, generator=g)  # a hand-made embedding matrix
    pairs = [("big", "large"), ("little", "small"), ("big", "zzzzqx")]
    got = pair_cosines(emb, single_tokens(tok, (w for p in pairs for w in p)), pairs)
    assert set(got) == {"big|large", "little|small"}  # the unknown word is no single token
    for key, value in got.items():
        a, b = (emb[single_token(tok, w)] for w in key.split("|"))
        assert value == pytest.approx(float(a @ b / (a.norm() * b.norm())), abs=1e-6)


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_words_are_looked_up_in_batches_as_one_by_one(kind: str) -> None:
    """`single_tokens` (two batched calls) finds each word's token as the word-by-word lookup
    would: after a space first (a byte-level BPE token carries it), then alone; an unknown or
    split word has none; a repeated word is one entry."""
    from harness.tasks.synonyms import single_tokens

    def one(tok, word):  # type: ignore[no-untyped-def]  # the lookup a word at a time
        for form in (" " + word, word):
            ids = tok(form, add_special_tokens=False)["input_ids"]
            if len(ids) == 1 and ids[0] not in set(tok.all_special_ids):
                return ids[0]
        return None

    tok = train_tokenizer(["big large small little fast quick " * 20], 300, kind)
    words = ["big", "large", "quick", "zzzzqx", "sma", "big", "bigs", "l"]
    got = single_tokens(tok, words)
    assert list(got) == list(dict.fromkeys(words))
    assert got == {w: one(tok, w) for w in words} and got["big"] is not None
    assert single_tokens(tok, []) == {}


def test_random_pairs_show_a_shared_direction_as_chance_level() -> None:
    """Every vector = a common direction + a small own part, synonyms identical but for
    noise: raw cosines are high for any pair, the margin over shuffled pairs is what is left."""
    from harness.tasks.synonyms import pair_cosines, single_token, single_tokens

    words = ["big", "large", "small", "little", "fast", "quick", "old", "aged"]
    tok = train_tokenizer([" ".join(words) * 20], 64, "encoder")
    g = torch.Generator().manual_seed(0)
    emb = torch.full((len(tok), 16), 1.0) + 0.3 * torch.randn(len(tok), 16, generator=g)
    pairs = list(zip(words[::2], words[1::2], strict=True))
    for a, b in pairs:  # synonyms: the same own part
        emb[single_token(tok, b)] = emb[single_token(tok, a)] + 0.01
    ids = single_tokens(tok, words)
    same, chance = pair_cosines(emb, ids, pairs), pair_cosines(emb, ids, pairs, shuffled=True)
    assert set(same) == set(chance) and min(same.values()) > 0.99
    assert 0.7 < sum(chance.values()) / len(chance) < 0.99  # high, from the shared direction
    assert pair_cosines(emb, ids, pairs, shuffled=True) == chance  # a fixed shuffle


def test_one_seed_the_shift_is_tested_on_paired_examples() -> None:
    keys = [f"w{i}|v{i}" for i in range(30)]
    base = {k: 0.1 + 0.01 * i for i, k in enumerate(keys)}
    better = {k: v + 0.05 + 0.001 * (i % 3) for i, (k, v) in enumerate(base.items())}
    up, down = per_example(better, base), per_example(base, better)
    assert up is not None and down is not None
    assert up.p < 1e-3 and up.delta > 0 > down.delta
    samples = pd.DataFrame(
        [
            {
                "model": m,
                "sweep": "{}",
                "task": "synonyms",
                "metric": "synonym_cosine",
                "step": 5,
                "key": k,
                "value": v,
            }
            for m, d in (("cwt", better), ("ce", base))
            for k, v in d.items()
        ]
    )
    agg = pd.DataFrame(
        [
            {
                "model": m,
                "sweep": "{}",
                "task": "synonyms",
                "metric": "synonym_cosine",
                "mean": sum(d.values()) / 30,
                "std": 0.0,
                "n": 1,
                "higher_is_better": True,
                "values": [0.0],
                "by_seed": {0: sum(d.values()) / 30},
                "objective": m,
                "kind": "encoder",
            }
            for m, d in (("cwt", better), ("ce", base))
        ]
    )
    cmp = compare_to_baseline(agg, "ce", samples)
    row = cmp[cmp["model"] == "cwt"].iloc[0]
    assert (
        row["significant"]
        and row["test"].startswith(f"{PER_EXAMPLE}: paired bootstrap")
        and row["delta"] == pytest.approx(0.051, abs=1e-3)
    )


def test_the_distribution_plot(tmp_path: Path) -> None:
    samples = pd.DataFrame(
        [
            {
                "model": m,
                "sweep": "{}",
                "task": "synonyms",
                "metric": "synonym_cosine",
                "step": 1,
                "key": str(i),
                "value": math.sin(i) + o,
            }
            for m, o in (("a", 0), ("b", 0.2))
            for i in range(50)
        ]
    )
    (path,) = plot_distributions(samples, tmp_path)
    assert path.name == "dist-synonyms-synonym_cosine.png" and path.read_bytes()[:4] == b"\x89PNG"


def test_a_missing_wordnet_folder_is_a_suite_error(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "name: s\nmodels: [{preset: bert-tiny, objective: cwt}]\ntasks: "
        "[{type: synonyms, params: {wordnet: nowhere}}]\n"
    )
    with pytest.raises(SuiteError, match=r"tasks\[0\]\.params\.wordnet: .*nowhere: no data.noun"):
        load_suite(f)


def test_synonyms_on_real_text(isolated: Path) -> None:
    suite = isolated / "syn.yaml"
    suite.write_text(
        "name: syn\nbaseline: bert-tiny-ce\n"
        "models: [{preset: bert-tiny, objective: ce}, {preset: bert-tiny, objective: cwt}]\n"
        "recipe: {corpus: [corpus/wikitext-2/valid.txt], max_documents: 400, vocab_size: 3000, "
        "steps: 2, batch_size: 4, seq_len: 64}\n"
        "tasks: [{type: synonyms}]\n"
    )
    lb = isolated / "lb"
    assert run_suite(suite, root=lb, progress=False).failed == []
    df = read_leaderboard(lb / "syn")
    pairs = df[df["metric"] == "synonym_pairs"]["value"]
    assert (pairs > 20).all()
    kept = read_samples(lb / "syn")
    per_metric = kept.groupby("metric")["key"].count().to_dict()
    assert per_metric == dict.fromkeys(
        ["random_pair_cosine", "synonym_cosine", "synonym_margin"], int(pairs.sum())
    )
    assert set(kept["model"]) == {"bert-tiny-ce", "bert-tiny-cwt"}
    means = kept.groupby(["model", "metric"])["value"].mean()
    for metric in ("synonym_cosine", "random_pair_cosine", "synonym_margin"):
        rows = df[df["metric"] == metric].set_index("model")["value"]
        assert means.xs(metric, level="metric").to_dict() == pytest.approx(rows.to_dict())
    # the margin is pair by pair: synonym cosine minus the same first word's random partner
    wide = kept.pivot_table(index=["model", "key"], columns="metric", values="value")
    assert_close(
        wide["synonym_margin"].to_numpy(copy=True),  # writable: torch warns on a read-only view
        (wide["synonym_cosine"] - wide["random_pair_cosine"]).to_numpy(copy=True),
    )
