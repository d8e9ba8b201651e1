"""The page of a claims file (`harness.paper.claims_file`), read in a minute.

First one row per claim and arm: the answer in words ("headless better than vanilla, as
stated", "untestable: not run", "inconclusive"), our Δ with its interval at the corrected level,
the adjusted p and the seeds. Then why, one line each. The method once, at the end.

    write_claims_page(Path("my-claims.yaml"), Path("leaderboards"), None)  # beside the boards

`own_claims_section` puts this project's own claims files (`own_claims`: every file of
`suites/claims/` but the paper's) on the paper's page, after the paper's claims and labelled
as our questions: a line each, its answers tallied, with a link to its page, and under it
each confirmatory claim's answer with its Δ and interval.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.paper.claim_rows import delta_text
from harness.paper.claims_figure import write_claims_figure
from harness.paper.claims_file import PAPER_CLAIMS, ClaimsFile, load_claims
from harness.paper.comparable import cause
from harness.paper.findings import Finding, family_sizes, judge
from harness.paper.preregistration import Registration, demoted, mark, register
from harness.paper.tables import table
from zoo.writer import write_text

COLUMNS = ["claim", "scale", "arm", "baseline", "answer", "our Δ [CI]", "adjusted p", "seeds"]
METHOD = (
    "Each arm is reduced to one value per pretraining seed, then compared across seeds "
    "(paired t-test; speed and memory: per side-by-side measurement). A claim is tested as "
    "stated: at every sweep point, as a trend, or at its one condition. The family is the "
    "confirmatory claims of one scale, declared in the file; p is multiplied by its size "
    "(Bonferroni) and the interval drawn at the same level. Inconclusive is not a refutation. "
    "Exploratory rows keep their raw p and 95 % interval and get no verdict."
)


def answer(f: Finding, by_model: bool = False) -> str:
    """The finding's verdict in words: the arms by role ("headless better than vanilla"), or
    `by_model`, by the models the rows name."""
    side = "better" if f.gain > 0 else "worse"
    arm, base = (
        (f.source.roles[f.role], f.source.roles["vanilla"]) if by_model else (f.role, "vanilla")
    )
    if f.verdict is None:
        return _exploratory(f, arm, base)
    if f.verdict == "reproduced":
        return f"{arm} {side} than {base}, as stated"
    if f.verdict == "contradicted":
        return f"{arm} {side} than {base}, against the claim"
    if f.verdict == "inconclusive":
        return "inconclusive"
    return f"untestable: {cause(f.blocked)}"


def _exploratory(f: Finding, arm: str, base: str) -> str:
    """An exploratory finding in words: its direction and raw p, or why it has none."""
    if f.blocked is not None:
        return f"exploratory; untestable: {cause(f.blocked)}"
    if math.isnan(f.gain):
        return "exploratory (no verdict)"
    side = "better" if f.gain > 0 else "worse"
    p = "no test" if math.isnan(f.p_value) else f"raw p {f.p_value:.2g}"
    return f"exploratory: {arm} {side} than {base} ({p})"


def _why(f: Finding) -> str:
    """The reason, with the models named where the test decided."""
    if f.late:
        return f.declared + " (raw p, 95 % interval)"
    if f.verdict in ("reproduced", "contradicted"):
        return f"{answer(f, True)} (adjusted p = {f.p_adjusted:.3g})"
    return f.reason


def _p(f: Finding) -> str:
    return "-" if math.isnan(f.p_adjusted) else f"{f.p_adjusted:.3g}"


def _row(f: Finding) -> list[str]:
    delta = delta_text(f)
    level = "" if delta == "-" else f" ({100 * f.level:.3g} %)"
    arm, base = f.source.roles[f.role], f.source.roles["vanilla"]
    return [f.figure.ident, f.scale, arm, base, answer(f, True), delta + level, _p(f), str(f.seeds)]


def judge_claims(path: Path, root: Path) -> tuple[ClaimsFile, list[Finding]]:
    """The file's claims judged from the leaderboards under `root`: a claim git does not show
    declared before its rows is judged as exploratory (`harness.paper.preregistration`)."""
    claims, found, _ = judge_registered(path, root)
    return claims, found


def judge_registered(
    path: Path, root: Path
) -> tuple[ClaimsFile, list[Finding], dict[tuple[str, str], Registration]]:
    """`judge_claims`, with each claim's registration (its declaration and first row)."""
    claims = load_claims(path)
    registered = register(path, claims.declared(), root)
    found = judge(demoted(claims.declared(), registered), root)
    mark(found, registered)
    return claims, found, registered


def registration_lines(registered: dict[tuple[str, str], Registration]) -> list[str]:
    """Each claim's declaration commit and date, and whether that makes it confirmatory."""
    return [f"- **{ident}** ({scale}): {r.words()}" for (scale, ident), r in registered.items()]


def render_claims(
    claims: ClaimsFile,
    found: list[Finding],
    path: Path,
    root: Path,
    registered: dict[tuple[str, str], Registration],
    figure: str | None = None,
) -> str:
    """The page, Markdown; with `figure`, the name of its drawing beside it, shown under
    the table."""
    families = family_sizes(demoted(claims.declared(), registered))
    sizes = ", ".join(f"{s.name}: {families.get(s.name, 0)}" for s in claims.scales)
    lines = [
        f"# Claims of `{claims.name}`, judged",
        "",
        *([claims.paper, ""] if claims.paper else []),
        f"Generated by `hlm report --claims {path.as_posix()}` from `{root.as_posix()}`. "
        f"Confirmatory claims per scale (the families): {sizes}. A claim is confirmatory "
        "only where git shows it declared before its first row; the others are exploratory.",
        "",
        table(COLUMNS, [_row(f) for f in found]),
        "",
        *([f"![Each claim's Δ and interval, by metric]({figure})", ""] if figure else []),
        "## Declared when",
        "",
        *registration_lines(registered),
        "",
        "## Why",
        "",
        *(
            f"- **{f.figure.ident}** ({f.scale}, {f.source.roles[f.role]}): {_why(f)}"
            for f in found
        ),
        "",
        *_read_lines(found),
        "## Method",
        "",
        METHOD,
        "",
    ]
    return "\n".join(lines)


def _read_lines(found: list[Finding]) -> list[str]:
    """A section of how the values were read where the rows alone do not say (equal time:
    the ratio, the steps, the checks), each once with the claims it serves; [] for none."""
    read: dict[str, list[str]] = {}
    for f in found:
        if f.measured is not None and f.measured.detail:
            said = "; ".join(x for x in (f.measured.detail, f.measured.check) if x)
            read.setdefault(said, []).append(f.figure.ident)
    if not read:
        return []
    items = [f"- {', '.join(ids)}: {detail}" for detail, ids in read.items()]
    return ["## How it was read", "", *items, ""]


def write_claims_page(path: Path, root: Path, out_dir: Path | None) -> list[Path]:
    """Judge the claims file at `path` from `root` and write its page, `<name>-claims.md`,
    and its figure, `<name>-claims.svg` (where a claim has a Δ), into `out_dir` (default:
    `root`): the page first. A figure left from an earlier judgement with no Δ is removed."""
    claims, found, registered = judge_registered(path, root)
    folder = out_dir if out_dir is not None else root
    target, drawing = folder / f"{claims.name}-claims.md", folder / f"{claims.name}-claims.svg"
    title = f"Claims of {claims.name}: how much better each arm is than its baseline"
    figure = write_claims_figure(found, drawing, title)
    if figure is None:
        drawing.unlink(missing_ok=True)
    name = figure.name if figure is not None else None
    page = render_claims(claims, found, path, root, registered, name)
    return [write_text(target, page), *([figure] if figure is not None else [])]


def own_claims() -> list[Path]:
    """This project's own claims files: every YAML of `suites/claims/` but the paper's."""
    return sorted(p for p in PAPER_CLAIMS.parent.glob("*.yaml") if p != PAPER_CLAIMS)


def own_claims_section(root: Path, files: list[Path]) -> list[str]:
    """The paper page's section of our own questions: per claims file in `files`, judged from
    `root`, a line with a link to its page and its answers tallied (the claims answered as
    stated or against, named). Markdown lines, linking from docs/."""
    if not files:
        return []
    lines = [
        "",
        "## Our own questions (not the paper's claims)",
        "",
        "Our measurements, not the paper's; each file is a family of its own.",
        "",
    ]
    for path in files:
        claims, found = judge_claims(path, root)
        page = f"../leaderboards/{claims.name}-claims.md"
        confirmatory = [f for f in found if f.figure.compared and not f.late]
        lines.append(f"- [{claims.name}]({page}): {tally(found)}{_shared(confirmatory)}.")
        lines += [f"  - {_answer_line(f)}" for f in confirmatory]
    return lines


def _shared(found: list[Finding]) -> str:
    """What the answer lines share, said once: the intervals' level and the seeds."""
    said = {(f.level, f.seeds) for f in found if delta_text(f) != "-"}
    if not said:
        return ""
    levels = ", ".join(sorted({f"{100 * level:.3g} %" for level, _ in said}))
    seeds = ", ".join(str(n) for n in sorted({n for _, n in said}))
    return f"; intervals at {levels}, {seeds} seeds"


def _answer_line(f: Finding) -> str:
    """A confirmatory claim's answer, with its Δ and interval (the claim's name and its page
    say which arms; the family's line, the level and the seeds), and at equal time the check
    at the runs' own training-loop ratio."""
    said = f"{f.figure.ident}: {answer(f, True)}"
    delta = delta_text(f)
    check = f.measured.check if f.measured is not None else ""
    return "; ".join(x for x in (said, "" if delta == "-" else f"Δ {delta}", check) if x)


def own_headline(root: Path, files: list[Path]) -> str:
    """The README's sentence on our own pre-registered questions: each claims file in
    `files` with a confirmatory claim (declared before its rows, as git shows), named with
    its question and its answers tallied; '' where no file has one."""
    said = []
    for path in files:
        claims, found = judge_claims(path, root)
        if any(f.figure.compared for f in found):
            said.append(f"{claims.name} ({claims.paper}): {tally(found)}")
    return f"Our own pre-registered questions: {'; '.join(said)}." if said else ""


def tally(found: list[Finding]) -> str:
    """The answers in a few words: the claims answered as stated or against them by name,
    the others counted."""
    named = {"reproduced": "as stated", "contradicted": "against the claim"}
    counted = {"inconclusive": "inconclusive", None: "exploratory"}
    parts = [f"{len(found)} claims"]
    for verdict, said in named.items():
        ids = [f.figure.ident for f in found if f.verdict == verdict]
        parts += [f"{said}: {', '.join(ids)}"] if ids else []
    for kind, said in counted.items():
        n = sum(f.verdict == kind for f in found)
        parts += [f"{said}: {n}"] if n else []
    untestable = sum(f.verdict not in (*named, *counted) for f in found)
    parts += [f"untestable: {untestable}"] if untestable else []
    return "; ".join(parts)
