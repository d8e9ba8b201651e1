"""A deterministic SYNTHETIC corpus: a made-up language with learnable structure.

It exists so that the demo and CI need no download. It is not English and says nothing about
real-text quality. Structure a model can learn:

- a fixed lexicon of pseudo-words built from syllables (nouns, verbs, adjectives per topic);
- number agreement: singular nouns take verbs ending in "-s", plural nouns end in "-i";
- determiners agree with number ("ka" singular, "lo" plural);
- each document has a topic; its nouns and verbs come mostly from that topic's lexicon;
- sentences follow a small grammar: DET ADJ? NOUN VERB DET ADJ? NOUN ( "ve" DET NOUN )? "."
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


def synthetic_corpus(n_docs: int = 2000, seed: int = 0, n_topics: int = 8) -> list[str]:
    """`n_docs` documents of 3-12 sentences; identical output for identical arguments."""
    rng = random.Random(seed)
    taken: set[str] = set()
    adjectives = _lexicon(rng, 40, 2, 2, taken)
    topics = [
        (_lexicon(rng, 30, 2, 3, taken), _lexicon(rng, 20, 2, 3, taken)) for _ in range(n_topics)
    ]
    common_nouns = _lexicon(rng, 20, 1, 2, taken)

    def noun_phrase(nouns: list[str]) -> tuple[str, bool]:
        plural = rng.random() < 0.4
        noun = rng.choice(nouns if rng.random() < 0.85 else common_nouns)
        words = ["lo" if plural else "ka"]
        if rng.random() < 0.4:
            words.append(rng.choice(adjectives))
        words.append(noun + ("i" if plural else ""))
        return " ".join(words), plural

    docs: list[str] = []
    for _ in range(n_docs):
        nouns, verbs = topics[rng.randrange(n_topics)]
        sentences = []
        for _ in range(rng.randint(3, 12)):
            subj, plural = noun_phrase(nouns)
            verb = rng.choice(verbs) + ("" if plural else "s")
            obj, _ = noun_phrase(nouns)
            s = f"{subj} {verb} {obj}"
            if rng.random() < 0.3:
                extra, _ = noun_phrase(nouns)
                s += f" ve {extra}"
            sentences.append(s[0].upper() + s[1:] + ".")
        docs.append(" ".join(sentences))
    return docs
