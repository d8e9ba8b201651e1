"""The headline: per scale, what the paper's claims came to, each verdict split by direction.

A count of verdicts alone mixes directions: "2 reproduced" may be one claim that headless
is better and one that it is slower. So each verdict is split by what the paper says of the
headless arm (better or worse than vanilla), which with the verdict gives what we found:
reproduced claims go the paper's way, contradicted ones the other, inconclusive ones
neither. Claims not compared are split by why (`Finding.blocked`): a missing arm is "not
run", never a failed gate.

    headline(findings)
    # "At CPU scale, 28 of the paper's claims: 2 reproduced (1 headless better, 1 headless
    #  worse, as the paper says), ..."
"""

from __future__ import annotations

import math
from collections import Counter

from harness.paper.claims_file import paper_claims
from harness.paper.comparable import CAUSES
from harness.paper.findings import Finding
from harness.results.stats import POWER


def _ways(claims: list[Finding]) -> Counter[str]:
    """How many of `claims` the paper has headless better, and worse, than vanilla."""
    return Counter(f.figure.paper_direction(f.role) or "no direction" for f in claims)


def _parts(counts: Counter[str], words: dict[str, str]) -> str:
    """The non-zero counts, in `words`' order and wording, joined."""
    return ", ".join(f"{counts[k]} {w}" for k, w in words.items() if counts[k])


def _reproduced(claims: list[Finding]) -> str:
    said = _parts(_ways(claims), {"better": "headless better", "worse": "headless worse"})
    return f"{len(claims)} reproduced ({said}, as the paper says)"


def _contradicted(claims: list[Finding]) -> str:
    words = {
        "better": "headless worse where the paper says better",
        "worse": "headless better where the paper says worse",
    }
    return f"{len(claims)} contradicted ({_parts(_ways(claims), words)})"


def _inconclusive(claims: list[Finding]) -> str:
    words = {"better": "the paper says headless better", "worse": "it says worse"}
    could = sum((p := f.paper_power()) is not None and p >= POWER for f in claims)
    power = f"; {could} of {len(claims)} had {POWER:.0%} power at the paper's Δ"
    return f"{len(claims)} inconclusive ({_parts(_ways(claims), words)}{power})"


def _not_comparable(claims: list[Finding]) -> str:
    kinds = Counter[str](f.blocked or "no comparison" for f in claims)
    words = {**CAUSES, "no comparison": "no comparison"}
    return f"{len(claims)} not comparable ({_parts(kinds, words)})"


SAY = {
    "reproduced": _reproduced,
    "contradicted": _contradicted,
    "inconclusive": _inconclusive,
    "not comparable": _not_comparable,
}


def _late(late: list[Finding]) -> str:
    """The claims declared after their rows, judged exploratory: how many, and which way
    their raw Δ went (no verdict: exploratory)."""
    shown = [f for f in late if f.blocked is None and not math.isnan(f.gain)]
    agrees = sum((f.gain > 0) == (f.figure.paper_direction(f.role) == "better") for f in shown)
    blocked = _parts(Counter[str](f.blocked for f in late if f.blocked), dict(CAUSES))
    return (
        f"{len(late)} exploratory, declared after their rows ({agrees} with a Δ the paper's "
        f"way, {len(shown) - agrees} the other way, no verdict"
        + (f"; untestable: {blocked}" if blocked else "")
        + ")"
    )


def _main_said(claims: list[Finding]) -> str:
    """What the paper's main claims came to among `claims`, counted by verdict."""
    keys = set(paper_claims().main_claims())
    main = [f for f in claims if (f.figure.key, f.role) in keys]
    if not main:
        return "no main claim of the paper is compared here"
    counts = Counter(_main_verdict(f) for f in main)
    order = ("reproduced", "contradicted", "inconclusive", "untestable", "exploratory")
    said = ", ".join(f"{counts[v]} {v}" for v in order if counts[v])
    return f"of its {len(main)} main claims, {said}"


def _main_verdict(f: Finding) -> str:
    if f.late:
        return "exploratory"
    return "untestable" if f.verdict == "not comparable" else str(f.verdict)


def headline(found: list[Finding], suite: str | None = None) -> str:
    """One sentence per scale with rows (CPU always): the claims it compares, each verdict
    split by direction (or, not compared, by why), the claims declared after their rows
    (exploratory), and the main claims' verdicts; `suite`: that suite's findings alone."""
    sentences = []
    scales = list(dict.fromkeys(f.scale for f in found))
    for scale in scales:
        mine = [f for f in found if f.scale == scale]
        if scale != scales[0] and not any(f.measured is not None for f in mine):
            continue
        claims = [f for f in mine if f.figure.compared]
        late = [f for f in mine if f.late]
        by_verdict = {v: [f for f in claims if f.verdict == v] for v in SAY}
        said = [SAY[v](chosen) for v, chosen in by_verdict.items() if chosen]
        said += [_late(late)] if late else []
        where = f" that {suite} compares" if suite is not None else ""  # read in the README too
        sentences.append(
            f"At {scale} scale, {len(claims) + len(late)} of the paper's claims{where}: "
            f"{'; '.join(said)}; {_main_said(claims + late)}."
        )
    return " ".join(sentences)
