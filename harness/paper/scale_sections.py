"""The reproduction page's scales: one table of every scale's verdicts, then what a scale
without rows waits for.

Each claim's section of the page (`harness.paper.document`) holds its rows at every scale;
this section says, per scale, which models it trains, how many claims its family holds and
what they came to. A scale whose suites have no rows for both arms yet gets its pending text
(`ScaleSpec.pending` in the claims file; its baselines' gates are in the gates section); rows
filed away (`_superseded/`) are named so that a reader knows they exist.

    scales_section(paper_claims(), found, Path("leaderboards"))
"""

from __future__ import annotations

from pathlib import Path

from harness.paper.claims_file import ClaimsFile
from harness.paper.figures import VERDICTS
from harness.paper.findings import Finding
from harness.paper.labels import run_on
from harness.paper.tables import table
from harness.results.leaderboard import SUPERSEDED, result_files


def rows_line(mine: list[Finding]) -> str:
    """Which suites hold these findings' rows (the scales section says where they ran)."""
    boards = {f.source.board: f.source.command for f in mine}
    named = ", ".join(f"`{b}`" for b in sorted(boards))
    if all(command == f"hlm run {board}" for board, command in boards.items()):
        return f"Our rows: {named} (`hlm run SUITE`)."
    return f"Our rows: {named}."  # a second machine's folders: the pending text says how


def run_where(mine: list[Finding]) -> str:
    """Where these findings' rows were run, as the rows record it."""
    where = run_on(*{f.source.board: f.machines for f in mine}.values())
    return where.removeprefix("run on ") or "-"


def tally_row(scale: str, mine: list[Finding]) -> list[str]:
    """A scale's claims counted by verdict: the scale, the family's size, a count each."""
    claims = [f for f in mine if f.figure.compared]
    return [scale, str(len(claims)), *(str(sum(f.verdict == v for f in claims)) for v in VERDICTS)]


def _filed_away(root: Path | None, suites: list[str]) -> list[str]:
    """A paragraph naming the cells of `suites` whose rows were filed away (`_superseded/`),
    so that a reader knows they exist and why they are not compared; [] where none were."""
    if root is None:
        return []
    counts = {
        s: len({f.stem.split(".", 1)[0] for f in result_files(root / s / SUPERSEDED)})
        for s in suites
    }
    named = [f"{n} in `{s}/{SUPERSEDED}/`" for s, n in sorted(counts.items()) if n]
    if not named:
        return []
    return ["", f"Filed away, not compared: cells of settings since changed ({', '.join(named)})."]


def _models(mine: list[Finding]) -> str:
    return ", ".join(dict.fromkeys(f.source.roles["vanilla"] for f in mine))


def scales_section(paper: ClaimsFile, found: list[Finding], root: Path | None) -> list[str]:
    """The scales: their verdicts in one table, then each scale that waits for rows."""
    rows = []
    for name in dict.fromkeys(f.scale for f in found):
        mine = [f for f in found if f.scale == name]
        counts = tally_row(name, mine)
        rows.append([*counts[:2], _models(mine), *counts[2:], run_where(mine)])
    parts = [
        "",
        "## Scales",
        "",
        "Later scales map the CPU suites and presets to their own; each scale is one family.",
        "",
        table(["scale", "claims", "baselines", *VERDICTS, "run on"], rows),
    ]
    pending: dict[str, str] = {}  # a scale's plan, said once: the first scale that has it
    for scale in paper.mappings():
        mine = [f for f in found if f.scale == scale.name]
        away = _filed_away(root, sorted({f.source.board for f in mine}))
        if any(f.measured is not None for f in mine):
            parts += ["", f"### {scale.name}", *away] if away else []
            continue
        some = any(f.machines for f in mine)
        state = "No claim has both arms' rows yet." if some else "No rows committed yet."
        plan = f"As at {pending[scale.pending]}." if scale.pending in pending else scale.pending
        pending.setdefault(scale.pending, scale.name)
        parts += ["", f"### {scale.name}", "", rows_line(mine), "", f"{state} {plan}"]
        parts += away
    return parts
