"""`synonyms` task (paper Appendix A, Figure 8): how close the input embeddings of synonyms are.

For the WordNet synonym pairs whose two words are each a single token of the model's
tokenizer, the cosine similarity of their input embeddings. It reports the mean
(`synonym_cosine`, with its standard error), the number of pairs, and the same mean over
random pairs of the same words (`random_pair_cosine`: each pair's second word replaced by
another pair's, a fixed shuffle) with the margin between the two (`synonym_margin`): an
embedding space whose vectors all share a direction has high cosines for any pair, so the
margin is what says synonyms sit closer than chance. It keeps every pair's cosine (and
margin) as a sample: `hlm plot` draws their distribution per model (Figure 8) and `hlm
leaderboard` tests the shift against the baseline model, two-sided, over pretraining seeds,
or with one seed a model on the pairs both share (a paired bootstrap). The paper reports
the mean shift without a test: +1.4 points for its encoder, about +7 for its decoders.

WordNet 3.0 is read from `wordnet:` (a folder of `data.noun`, `data.verb`...: Debian's
`wordnet-base`, or NLTK's `wordnet` corpus folder), by default `$HLM_DATA_ROOT/wordnet`.
torch and the checkpoint loader are imported when a cell runs: checking a suite does not
load them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import Field

from harness.downstream.wordnet import synonym_pairs, synsets_digest
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from zoo.data.corpus import data_root
from zoo.errors import UserError
from zoo.settings import Settings

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

PartOfSpeech = Literal["noun", "verb", "adj", "adv"]


class SynonymParams(Settings):
    wordnet: str | None = Field(
        None, description="WordNet database folder (default: $HLM_DATA_ROOT/wordnet)"
    )
    pos: list[PartOfSpeech] = Field(
        default_factory=lambda: list(get_args(PartOfSpeech)), min_length=1
    )


def single_tokens(
    tokenizer: PreTrainedTokenizerBase, words: Iterable[str]
) -> dict[str, int | None]:
    """Each distinct word's id where the tokenizer keeps it whole (None where it does not): as
    it appears after a space in running text (a byte-level BPE token carries the space), else
    on its own. Tokenized in two batches, not a call a word."""
    unique = list(dict.fromkeys(words))
    found: dict[str, int | None] = dict.fromkeys(unique)
    if not unique:
        return found
    special = set(tokenizer.all_special_ids)  # an unknown word is one [UNK]: not kept whole
    for forms in ([" " + w for w in unique], unique):
        encoded = tokenizer(forms, add_special_tokens=False)["input_ids"]
        for word, ids in zip(unique, encoded, strict=True):
            if found[word] is None and len(ids) == 1 and ids[0] not in special:
                found[word] = int(ids[0])
    return found


def single_token(tokenizer: PreTrainedTokenizerBase, word: str) -> int | None:
    """`single_tokens` of one word."""
    return single_tokens(tokenizer, [word])[word]


SHUFFLE_SEED = 0


def pair_cosines(
    embeddings: torch.Tensor,
    ids: Mapping[str, int | None],
    pairs: list[tuple[str, str]],
    shuffled: bool = False,
) -> dict[str, float]:
    """`a|b` -> cosine of the two words' embedding rows, for pairs of distinct single tokens
    (`ids`: each word's token, `single_tokens`); with `shuffled`, of `a` and the second word
    of another kept pair (a fixed permutation): the chance level of the same words.

    embeddings (Tensor): [V, D] input embeddings."""
    import torch
    import torch.nn.functional as F

    kept = [
        (a, b) for a, b in pairs if ids[a] is not None and ids[b] is not None and ids[a] != ids[b]
    ]
    if not kept:
        return {}
    left = torch.tensor([ids[a] for a, _ in kept])  # (P,)
    right = torch.tensor([ids[b] for _, b in kept])
    if shuffled:
        right = right[
            torch.randperm(len(kept), generator=torch.Generator().manual_seed(SHUFFLE_SEED))
        ]
    with torch.no_grad():  # cos: (P,)
        cos = F.cosine_similarity(embeddings[left].float(), embeddings[right].float(), dim=-1)
    return {f"{a}|{b}": float(c) for (a, b), c in zip(kept, cos, strict=True)}


def _mean_result(metric: str, samples: dict[str, float]) -> Result:
    """The mean of `samples` with its standard error, the samples kept."""
    values = list(samples.values())
    stderr = statistics.stdev(values) / math.sqrt(len(values))
    return Result(metric, statistics.fmean(values), stderr=stderr, samples=samples)


def _folder(p: SynonymParams, suite_dir: Path) -> Path:
    if p.wordnet is None:
        return data_root() / "wordnet"
    folder = Path(p.wordnet).expanduser()
    return folder if folder.is_absolute() else suite_dir / folder


def run_synonyms(ctx: TaskContext) -> list[Result]:
    import torch

    from zoo.tokenizers import load_tokenizer
    from zoo.train.checkpoint import load_model

    p: SynonymParams = ctx.params
    if ctx.checkpoint is None:
        raise UserError("synonyms needs a checkpoint")
    pairs = synonym_pairs(_folder(p, ctx.suite_dir), tuple(p.pos))
    model = load_model(str(ctx.checkpoint))
    emb = model.get_input_embeddings()
    if not isinstance(emb, torch.nn.Embedding):
        raise UserError(f"{ctx.checkpoint}: no input embedding matrix")
    tokenizer = load_tokenizer(str(ctx.checkpoint))
    ids = single_tokens(tokenizer, (w for pair in pairs for w in pair))
    cosines = pair_cosines(emb.weight, ids, pairs)
    if len(cosines) < 2:
        raise UserError(f"{ctx.checkpoint}: fewer than 2 WordNet synonym pairs are single tokens")
    chance = pair_cosines(emb.weight, ids, pairs, shuffled=True)
    return [
        _mean_result("synonym_cosine", cosines),
        Result("synonym_pairs", float(len(cosines))),
        _mean_result("random_pair_cosine", chance),
        _mean_result("synonym_margin", {k: cosines[k] - chance[k] for k in cosines}),
    ]


def _check(p: SynonymParams, suite_dir: Path) -> list[tuple[str, str]]:
    folder = _folder(p, suite_dir)
    missing = [f"data.{pos}" for pos in p.pos if not (folder / f"data.{pos}").is_file()]
    return (
        [("wordnet", f"{folder}: no {', '.join(missing)} (a WordNet 3.0 database folder)")]
        if missing
        else []
    )


def _data_digests(p: SynonymParams, suite_dir: Path) -> dict[str, str | None]:
    """The synsets of each WordNet data file a cell reads, digested (`synsets_digest`), each
    named as under the data root (`wordnet/data.noun`) wherever the folder lies."""
    folder = _folder(p, suite_dir)
    return {f"wordnet/data.{pos}": synsets_digest(folder / f"data.{pos}") for pos in p.pos}


class Synonyms(TaskType):
    name = "synonyms"
    description = (
        "cosine of WordNet synonyms' input embeddings (paper Appendix A / Fig. 8), "
        "with the per-pair distribution"
    )
    params = SynonymParams
    metrics = ("synonym_cosine", "synonym_pairs", "random_pair_cosine", "synonym_margin")

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_synonyms(ctx)

    def check(self, params: SynonymParams, suite_dir: Path) -> list[tuple[str, str]]:
        return _check(params, suite_dir)

    def identity(self, params: SynonymParams, suite_dir: Path) -> Identity:
        return Identity(data=_data_digests(params, suite_dir))


SYNONYMS = TASKS.add(Synonyms.name, Synonyms())
