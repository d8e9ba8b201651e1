"""A deterministic SYNTHETIC corpus: a made-up language with learnable structure.

It exists so that the demo and CI need no download. It is not English and says nothing about
real-text quality. Structure a model can learn:

- a fixed lexicon of pseudo-words built from syllables (nouns, verbs, adjectives per topic);
- number agreement: singular subjects take verbs ending in "-s", plural nouns end in "-i";
- determiners agree with number ("ka" singular, "lo" plural);
- each document has a topic; its nouns and verbs come mostly from that topic's lexicon;
- sentences follow a small grammar: DET ADJ? NOUN VERB DET ADJ? NOUN ( "ve" DET NOUN )? "."

The lexicon is fixed (the language is always the same); `seed` only draws the documents.
`agreement_examples` gives a CoLA-like acceptability task in the same language.
"""

from __future__ import annotations

import random

_SYLLABLES = [c + v for c in "bdfgkmnprstvz" for v in "aeiou"]


def _word(rng: random.Random, n_syll: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(n_syll))


def _lexicon(rng: random.Random, n: int, lo: int, hi: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        w = _word(rng, rng.randint(lo, hi))
        if w not in taken and w not in {"ka", "lo", "ve"}:
            taken.add(w)
            out.append(w)
    return out


class SyntheticLanguage:
    """The lexicon and grammar; sentences are drawn with a caller's random generator."""

    def __init__(self, n_topics: int = 8) -> None:
        rng = random.Random(0)
        taken: set[str] = set()
        self.adjectives = _lexicon(rng, 40, 2, 2, taken)
        self.topics = [
            (_lexicon(rng, 30, 2, 3, taken), _lexicon(rng, 20, 2, 3, taken))
            for _ in range(n_topics)
        ]
        self.common_nouns = _lexicon(rng, 20, 1, 2, taken)

    def noun_phrase(self, rng: random.Random, nouns: list[str]) -> tuple[str, bool]:
        plural = rng.random() < 0.4
        noun = rng.choice(nouns if rng.random() < 0.85 else self.common_nouns)
        words = ["lo" if plural else "ka"]
        if rng.random() < 0.4:
            words.append(rng.choice(self.adjectives))
        words.append(noun + ("i" if plural else ""))
        return " ".join(words), plural

    def sentence(self, rng: random.Random, topic: int, violate: bool = False) -> str:
        """One sentence; `violate` breaks subject-verb number agreement."""
        nouns, verbs = self.topics[topic]
        subj, plural = self.noun_phrase(rng, nouns)
        verb = rng.choice(verbs) + ("" if plural != violate else "s")
        obj, _ = self.noun_phrase(rng, nouns)
        s = f"{subj} {verb} {obj}"
        if rng.random() < 0.3:
            extra, _ = self.noun_phrase(rng, nouns)
            s += f" ve {extra}"
        return s[0].upper() + s[1:] + "."


def synthetic_corpus(n_docs: int = 2000, seed: int = 0, n_topics: int = 8) -> list[str]:
    """`n_docs` documents of 3-12 sentences; identical output for identical arguments."""
    lang = SyntheticLanguage(n_topics)
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        topic = rng.randrange(n_topics)
        docs.append(" ".join(lang.sentence(rng, topic) for _ in range(rng.randint(3, 12))))
    return docs


def agreement_examples(n: int, seed: int) -> list[tuple[str, int]]:
    """(sentence, label) pairs: 1 = acceptable, 0 = subject-verb agreement violated (half each)."""
    lang = SyntheticLanguage()
    rng = random.Random(1_000_000 + seed)
    out = []
    for i in range(n):
        violate = i % 2 == 1
        out.append(
            (
                lang.sentence(rng, rng.randrange(len(lang.topics)), violate=violate),
                0 if violate else 1,
            )
        )
    rng.shuffle(out)
    return out
