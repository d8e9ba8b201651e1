"""`hlm report --paper`: docs/REPRODUCTION.md (and the README's headline) from the leaderboards.

    hlm report --paper   # docs/REPRODUCTION.md, its -baselines.md companion, docs/figures/

The page is generated, never edited, from the paper's claims file (`suites/claims/paper.yaml`,
read by `harness.paper.claims_file`) and the committed rows. It opens with the main claims,
one row each, answered per scale in words, and the headline. Then a section per group of
claims: one table row per claim, arm and scale (`harness.paper.claim_rows`), with a why of at
most about 25 words; what the rows share (runs, set-up, per-example evidence) is said once
under the table, and the protocols once, numbered, at the end. Then the scales
(`harness.paper.scale_sections`), the power of the inconclusive claims, the results not
attempted, a link to the baselines page and the method. The baselines page holds every gate
(`harness.paper.gate_margins`) and the diagnostics (`harness.paper.diagnostics`). The verdicts'
figure (`harness.paper.forest`) and the gates' go to `figures/` beside the page. The README's
headline sits between two markers and comes from the same findings. A test regenerates all
of it from the committed leaderboards and checks it is unchanged.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from harness.paper.claim_rows import (
    COLUMNS,
    MEASURED,
    Footnotes,
    claim_row,
    section_notes,
)
from harness.paper.claims_file import findings, paper_claims
from harness.paper.claims_page import answer, own_claims, own_claims_section, own_headline
from harness.paper.diagnostics import diagnostic_sections
from harness.paper.findings import Finding
from harness.paper.forest import forest_svg, left_out, panels, write_forest
from harness.paper.gate_margins import GATES_FIGURE, gate_points, gate_section, write_gate_figure
from harness.paper.headline import headline
from harness.paper.ladder_section import ladder_section
from harness.paper.scale_sections import rows_line, scales_section
from harness.paper.tables import ditto, not_attempted, num, power_section, table
from harness.report.page import embedded_figure
from harness.results.leaderboard import result_files
from harness.results.stats import ALPHA
from zoo.errors import UserError
from zoo.reader import read_text
from zoo.writer import refuse_among_inputs, refuse_linked_folders, write_text

HEADLINE = re.compile(
    r"(<!-- reproduction-headline -->\n)(.*?)(\n<!-- /reproduction-headline -->)", re.S
)
FIGURE = Path("figures/verdicts.svg")  # beside the page, by `write_reproduction`
METHOD = (
    "1. Each arm is one value per pretraining seed (its last checkpoint; at equal time, "
    "vanilla's step of equal time). Checkpoints and fine-tuning runs are never samples.",
    "2. Arms are compared across seeds, two-sided: paired t-test on shared seeds, else "
    "Welch's. Δ is arm minus vanilla, positive when better; perplexities compare as logs. "
    "Speed and memory: each side-by-side measurement is one pair.",
    "3. A claim is tested as stated: pooled, at every sweep point, as a trend, or at its one "
    "condition.",
    "4. A claim is confirmatory only where git shows `suites/claims/paper.yaml` declared it "
    "before its first row; else it is exploratory. A scale's confirmatory claims form its "
    "family: p times its size (Bonferroni), intervals at the same level.",
    f"5. *Reproduced* or *contradicted*: adjusted p < {ALPHA}, with or against the paper. "
    "*Inconclusive* is never a refutation. *Not comparable*: an arm not run, a gate failed, "
    "or an arm giving one answer to 90 % of questions.",
    "6. A gate: the vanilla model's metric, its seed mean and interval, clears the best "
    "trivial answer plus a margin, and its untrained twin. The paper's models pass every "
    "bar but BoolQ's and PubMedQA's: there they score below always answering 'yes'.",
    "7. Exploratory rows keep raw p and 95 % intervals.",
)


def _plots(root: Path | None, mine: list[Finding]) -> str:
    """Links to each suite's committed plots (`hlm plot SUITE`) of the tasks read here."""
    if root is None:
        return ""
    links = []
    for board in dict.fromkeys(f.source.board for f in mine):
        slugs = {f.source.task.replace("/", "_") for f in mine if f.source.board == board}
        folder = root / board / "_plots"
        n = sum(1 for p in folder.glob("*.png") if any(f"-{s}" in p.stem for s in slugs))
        links += [f"[{board}: {n}](../leaderboards/{board}/_plots/)"] if n else []
    return f" Plots: {', '.join(links)}." if links else ""


def _figure_link(found: list[Finding]) -> list[str]:
    """The verdicts' figure (`harness.paper.forest`) and how to read it, where it has a claim."""
    if not panels(found):
        return []
    skipped = left_out(found)
    without = (
        f" {skipped} judged claims have no paper Δ and are in the tables only." if skipped else ""
    )
    return [
        "",
        f"![Our Δ in units of the paper's Δ, per judged claim and scale]({FIGURE.as_posix()})",
        "",
        "Our Δ over the paper's, with the corrected interval: 1 is the paper's effect. Green "
        "favours headless, red vanilla; filled is significant." + without,
    ]


def _ordered(mine: list[Finding]) -> list[Finding]:
    """A scale's rows together: by scale, then figure, then arm (each in the file's order)."""
    figures = list(dict.fromkeys(f.figure.key for f in mine))
    scales = list(dict.fromkeys(f.scale for f in mine))
    return sorted(mine, key=lambda f: (scales.index(f.scale), figures.index(f.figure.key), f.role))


def _ran(f: Finding, first: str) -> bool:
    """Whether a row belongs in its claim's table: every row of the first scale; at a later
    scale, those with rows (the scales section says what the others wait for)."""
    return f.scale == first or f.measured is not None


def _section(title: str, mine: list[Finding], root: Path | None, protocols: Footnotes) -> list[str]:
    """A heading, the rows line, claims' and measurements' tables, notes, plots."""
    first = mine[0].scale if mine else ""
    kept = [f for f in mine if _ran(f, first)]
    parts = ["", f"## {title}", "", rows_line(mine) + _plots(root, kept)]
    shown = _ordered([f for f in kept if not f.source.unavailable])
    claims = ditto([claim_row(f) for f in shown if f.figure.compared], (1, COLUMNS.index("why")))
    measured = [claim_row(f) for f in shown if not f.figure.compared]
    measured = ditto(measured, (1, MEASURED.index("why")))
    if claims:
        parts += ["", table(COLUMNS, claims)]
    if measured:
        parts += ["", "Exploratory rows (no claim, no verdict):", ""]
        parts += [table(MEASURED, measured)]
    return [*parts, "", *section_notes(kept, protocols)]


def _paper_says(f: Finding) -> str:
    side = f.figure.paper_direction(f.role)
    values = f.figure.values
    numbers = (
        f" ({num(values['vanilla'])} → {num(values[f.role])})"
        if "vanilla" in values and f.role in values
        else ""
    )
    return f"{f.role} {side or '?'}{numbers}"


def main_claims(found: list[Finding]) -> list[str]:
    """One row per main claim: what the paper says, and our answer in words at each scale
    with rows for it (the scales without any are named under the table)."""
    main = paper_claims().main_claims()
    mine = [f for f in found if (f.figure.key, f.role) in main]
    scales = list(dict.fromkeys(f.scale for f in found))
    ran = [s for s in scales if any(f.scale == s and (f.measured or f.gates) for f in mine)]
    rows = []
    for key, role in main:
        these = [f for f in mine if f.figure.key == key and f.role == role]
        if these:
            at = {f.scale: answer(f) for f in these}
            rows.append([key, _paper_says(these[0]), *(at.get(s, "-") for s in ran)])
    waiting = [s for s in scales if s not in ran]
    said = [f"No rows yet for the main claims at: {'; '.join(waiting)}.", ""] if waiting else []
    return ["## The main claims", "", table(["claim", "the paper", *ran], rows), "", *said]


def _baselines_link(found: list[Finding], baselines: str) -> list[str]:
    """A short section: how many baseline gates fail, the figure, the companion page."""
    points = gate_points(found)
    if not points:
        return []
    failed = sum(not p.check.passed for p in points)
    return [
        "",
        "## The baselines",
        "",
        f"{failed} of {len(points)} baseline gates fail. [{baselines}]({baselines}) has each "
        "gate's value and bar, and diagnostics of why they fail.",
        "",
        f"![Each baseline's margin to its gates, by pretraining tokens]({GATES_FIGURE.as_posix()})",
    ]


def render_baselines(found: list[Finding], root: Path | None) -> str:
    """The companion page: every baseline against its gates, then the diagnostics."""
    parts = [
        "# The baselines against their gates",
        "",
        "Generated by `hlm report --paper` with the reproduction page; do not edit.",
        *gate_section(found),
        *(diagnostic_sections(root) if root is not None else []),
    ]
    return "\n".join(parts) + "\n"


def baselines_page(doc: Path) -> Path:
    """The companion page written beside `doc`: `<doc's stem>-baselines.md`."""
    return doc.with_name(f"{doc.stem}-baselines.md")


def render(
    found: list[Finding],
    root: Path | None = None,
    baselines: str = baselines_page(Path("REPRODUCTION.md")).name,
) -> str:
    """The whole page, in Markdown (with links to the plots committed under `root` and to
    the companion page `baselines`)."""
    paper = paper_claims()
    parts = [
        "# The paper's claims, judged at small scale",
        "",
        "Generated by `hlm report --paper` from `suites/claims/paper.yaml` and the committed "
        "`leaderboards/`; do not edit. The paper: Godey, de la Clergerie, Sagot, *Headless "
        "Language Models: Learning without Predicting with Contrastive Weight Tying*, ICLR "
        "2024. Each row's file records its commit, versions, machine and configuration. The "
        "method is at the end.",
        "",
        *main_claims(found),
        f"**{headline(found)}**",
        *_figure_link(found),
    ]
    protocols = Footnotes()
    for claim, section in paper.sections.items():
        mine = [f for f in found if f.figure.claim == claim]
        parts += _section(section.title, mine, root, protocols)
    parts += scales_section(paper, found, root) + power_section(found)
    parts += ladder_section(root) if root is not None else []
    parts += own_claims_section(root, own_claims()) if root is not None else []
    parts += not_attempted([[n.source, n.what, n.why] for n in paper.not_attempted])
    parts += _baselines_link(found, baselines)
    parts += ["", "## Method", "", *METHOD]
    parts += protocols.lines("## Protocols")
    return "\n".join(parts) + "\n"


def render_html(found: list[Finding], suite: str) -> str:
    """`suite`'s findings as an HTML section (for `hlm report`)."""
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c.strip('*'))}</td>" for c in claim_row(f)) + "</tr>"
        for f in found
        if f.figure.compared
    )
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    svg = forest_svg(found)
    alt = "our Δ in units of the paper's Δ, per judged claim"
    figure = embedded_figure(svg, "image/svg+xml", alt) if svg is not None else ""
    return (
        f"<h2>The paper's figures beside ours</h2><p>{html.escape(headline(found, suite))}</p>"
        f"{figure}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def report_section(directory: Path, suite: str) -> str:
    """The paper's figures that `suite`'s rows give, as a section of `hlm report`'s page
    ("" when the suite feeds none)."""
    found = findings(directory.parent, suite=suite)  # reads this suite's rows only
    return render_html(found, suite) if found else ""


def write_reproduction(root: Path, doc: Path, readme: Path | None) -> list[Path]:
    """Write `doc` from the leaderboards under `root`, its verdicts' figure beside it
    (`FIGURE`, where a claim can be drawn) and the gates' (`GATES_FIGURE`, where a vanilla
    model has one), and the headline into `readme`. A `root` that
    holds no row of the paper's suites (a misspelt folder) is refused: it would overwrite
    the page with one on which every claim is not comparable."""
    found = findings(root)
    boards = sorted({f.source.board for f in found})
    if not any(result_files(root / b) for b in boards):
        raise UserError(
            f"{root}: no rows of the paper's suites ({', '.join(boards)}) here; "
            f"{doc} is left as it was"
        )
    read = {f"the leaderboard {b}": root / b for b in boards if (root / b).is_dir()}
    refuse_among_inputs(doc.parent, read, "--output-dir")
    refuse_linked_folders(doc.parent, FIGURE.parent.as_posix())  # docs/, docs/figures/
    companion = baselines_page(doc)
    write_text(doc, render(found, root, companion.name))
    write_text(companion, render_baselines(found, root))
    written = [doc, companion]
    for figure in (
        write_forest(found, doc.parent / FIGURE),
        write_gate_figure(found, doc.parent / GATES_FIGURE),
    ):
        written += [figure] if figure is not None else []
    if readme is not None and readme.exists():
        text = read_text(readme, "the README")
        said = " ".join(filter(None, (headline(found), own_headline(root, own_claims()))))
        new, n = HEADLINE.subn(lambda m: m.group(1) + said + m.group(3), text)
        if n:
            write_text(readme, new)
            written.append(readme)
    return written
