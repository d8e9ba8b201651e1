"""`hlm report --paper`: docs/REPRODUCTION.md (and the README's headline) from the leaderboards.

    hlm report --paper   # docs/REPRODUCTION.md, docs/figures/{verdicts,gates}.svg; README headline

The page is generated, never edited: how a verdict is reached, in words; per claim of the
paper, a table of our run beside the paper's figure (`harness.paper.findings.findings`, a row
each by `harness.paper.claim_rows`): Δ with its interval at the corrected level, the seeds,
the raw and adjusted p, one of four verdicts and its reason (the gates checked, where our protocol
differs); our measurements where the paper
makes no claim; the power the seeds had; the paper's results not attempted, and why; a
section per other scale (GPU), or what it waits for; every baseline against its gates across
the scales (`harness.paper.gate_margins`, drawn to `figures/gates.svg`); then the diagnostics
(`harness.paper.diagnostics`). Under the tally, a figure of every judged claim's Δ in units
of the paper's (`harness.paper.forest`), written to `figures/verdicts.svg` beside the page.
The README's headline sentence sits between two markers and is rewritten from the same
findings, so the two cannot disagree. A test regenerates the page, both figures and the
headline from the committed leaderboards and checks they are unchanged.
"""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from pathlib import Path

from harness.paper.claim_rows import COLUMNS, MEASURED, claim_row, delta_text
from harness.paper.claims_file import findings, paper_claims
from harness.paper.claims_page import answer
from harness.paper.diagnostics import diagnostic_sections
from harness.paper.figures import VERDICTS
from harness.paper.findings import Finding
from harness.paper.forest import forest_svg, left_out, panels, write_forest
from harness.paper.gate_margins import GATES_FIGURE, gate_section, write_gate_figure
from harness.paper.labels import run_on
from harness.paper.scales import Scale
from harness.paper.tables import not_attempted, num, power_section, table, tally
from harness.report.page import embedded_figure
from harness.results.leaderboard import SUPERSEDED, result_files
from harness.results.stats import ALPHA, POWER
from zoo.errors import UserError
from zoo.writer import write_text

HEADLINE = re.compile(
    r"(<!-- reproduction-headline -->\n)(.*?)(\n<!-- /reproduction-headline -->)", re.S
)
MAIN_CLAIM = "table1-tokens: GLUE average"
FIGURE = Path("figures/verdicts.svg")  # beside the page, by `write_reproduction`
HOW = (
    "How a verdict is reached. (1) Each arm is reduced to one value per pretraining seed (the "
    "seed's last checkpoint; at equal time, vanilla at the step it reaches in headless's "
    "time, interpolated in log-steps between its checkpoints; along training or over a sweep, "
    "the mean over the points both models evaluated; fine-tuning runs averaged inside it): "
    "checkpoints and fine-tuning runs of one pretraining run are never counted as "
    "independent. (2) The two arms are compared across seeds: a paired t-test where they "
    "share their seeds, Welch's otherwise; two-sided; Δ (the role minus vanilla, signed so "
    "that positive is better); a perplexity is compared as its log (Δ is a log ratio). A claim "
    "is tested as the paper states it: at every point of a sweep (each point tested, the "
    "weakest standing for the claim), as a trend over a sweep (the gap's slope on log2 of the "
    "variable, one slope per seed), or at the one condition it names. Speed and "
    "memory involve no pretraining: each side-by-side measurement (vanilla and headless "
    "alternating in one process) is one paired difference. (3) The family is the paper's "
    "claims at one scale, counted before any row exists; each p is multiplied by that count "
    "(Bonferroni), and each interval is drawn at the same level, so it leaves out 0 exactly "
    "where the adjusted p is below 0.05. Rows that test no claim are exploratory: raw p, "
    "95 % interval, no verdict. (4) *reproduced*: Δ in "
    f"the paper's direction and adjusted p < {ALPHA}; *contradicted*: the opposite direction and "
    f"adjusted p < {ALPHA}; *inconclusive*: neither (not a refutation: the reason gives the "
    f"smallest Δ the seeds could detect at {POWER:.0%} power and the seeds the paper's Δ would "
    "need, both at the corrected level, and says where the interval stops short of the paper's Δ); "
    "*not comparable*: a gate failed, an arm answers one class to every question, the paper "
    "states no direction, or there are no rows (the reason says which). (5) A gate asks "
    "whether the baseline (the vanilla model; for our comparisons of two headless variants, the "
    "paper's variant) is good enough for a comparison to mean anything: the task's own metric (MCC "
    "for CoLA, F1 for MRPC, Pearson for STS-B, accuracy on balanced sets, perplexity against the "
    "unigram model's) against chance for that metric, with a margin, and where the suite "
    "holds the model's untrained twin (its initial weights, `steps: 0`, fine-tuned the same "
    "way), against the twin's score plus that margin: pretraining must show in the score; "
    "every bar is one the paper's own model passes. (6) Where per-example scores were kept, "
    "a per-example test on one seed is shown as a second line of evidence, its Δ signed like "
    "the `our Δ` column (positive: better); it speaks of the test set, not of pretraining, and "
    "decides nothing. Values are in the paper's unit (percent where it uses percent); the `our "
    "run` column says what we trained (steps, tokens), the `paper setting` column what the "
    "paper did."
)


def _quote(claims: list[Finding]) -> str:
    """A claim that passed its gates, the paper's main one (GLUE at equal tokens) if it did."""
    passed = [f for f in claims if f.verdict != "not comparable"]
    if not passed:
        return "no claim passes its gates at this scale"
    main = next((f for f in passed if f.figure.key.startswith(MAIN_CLAIM)), passed[0])
    pct = main.figure.percent
    ours = main.measured.ours if main.measured else {}
    return (
        f"{main.figure.source}'s {main.figure.quantity}: {main.source.roles[main.role]} "
        f"{num(ours[main.role], pct)} against {main.source.roles['vanilla']} "
        f"{num(ours['vanilla'], pct)}, Δ {delta_text(main)} ({main.verdict})"
    )


def headline(found: list[Finding], suite: str | None = None) -> str:
    """One sentence per scale with rows (CPU always): what the tables hold, counted by
    verdict, and a claim that passed its gates; `suite`: that suite's findings alone."""
    sentences = []
    scales = list(dict.fromkeys(f.scale for f in found))
    for scale in scales:
        mine = [f for f in found if f.scale == scale]
        ran = any(f.measured is not None for f in mine)
        if scale != scales[0] and not ran:
            continue
        claims = [f for f in mine if f.figure.compared]
        counts = Counter(f.verdict for f in claims)
        counted = ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
        where = f" that {suite} compares" if suite is not None else ""  # read in the README too
        sentences.append(
            f"At {scale} scale, {len(claims)} comparisons of the paper's claims{where}: "
            f"{counted}{_powered(claims)}; {_quote(claims)}."
        )
    return " ".join(sentences)


def _powered(claims: list[Finding]) -> str:
    """How many inconclusive claims could have seen the paper's Δ: 80 % power at the
    corrected level (none where the paper gives no Δ or the seeds no spread)."""
    open_ = [f for f in claims if f.verdict == "inconclusive"]
    if not open_:
        return ""
    could = sum((p := f.paper_power()) is not None and p >= POWER for f in open_)
    return (
        f" ({could} of the {len(open_)} inconclusive had {POWER:.0%} power at the paper's Δ "
        "after correction)"
    )


def _plots(root: Path | None, mine: list[Finding]) -> list[str]:
    """Links to the committed plots (`hlm plot SUITE`) of the tasks these findings read."""
    if root is None:
        return []
    links = []
    for f in mine:
        slug = f.source.task.replace("/", "_")
        folder = root / f.source.board / "_plots"
        for png in sorted(folder.glob(f"*-{slug}*.png")):
            link = f"[{png.stem}](../leaderboards/{f.source.board}/_plots/{png.name})"
            links += [link] if link not in links else []
    return ["", "Plots: " + ", ".join(links) + "."] if links else []


def _figure_link(found: list[Finding]) -> list[str]:
    """The verdicts' figure (`harness.paper.forest`) and how to read it, where it has a claim."""
    if not panels(found):
        return []
    skipped = left_out(found)
    without = (
        f" {skipped} claims with a verdict are in the tables only: the paper gives no Δ for "
        "them (a figure it only draws, or a stated trend)."
        if skipped
        else ""
    )
    return [
        "",
        f"![Our Δ in units of the paper's Δ, per judged claim and scale]({FIGURE.as_posix()})",
        "",
        "Every claim with a verdict other than *not comparable* and a Δ in the paper, at every "
        "scale: our Δ divided by the paper's, with the corrected interval divided likewise. "
        "1 is the paper's effect, 0 none, below 0 the opposite direction. Green: our rows favour "
        "headless; red: vanilla. Filled: significant after correction; hollow: inconclusive. "
        "An arrow on "
        "the edge is a ratio beyond the axis, its value written: our Δ is on another scale "
        "than the paper's, as differences of perplexities far above the paper's are." + without,
    ]


def _rows_line(mine: list[Finding]) -> str:
    """Which suites hold these findings' rows, and where they were run (as recorded)."""
    boards = {f.source.board: f.source.command for f in mine}
    suites = ", ".join(f"`{b}` (`{boards[b]}`)" for b in sorted(boards))
    where = run_on(*{f.source.board: f.machines for f in mine}.values())
    return f"Our rows: {suites}" + (f"; {where}." if where else ".")


def _section(title: str, mine: list[Finding], root: Path | None, *lead: str) -> list[str]:
    """A heading, the rows line, the `lead` paragraphs, claims' and measurements' tables, plots."""
    parts = ["", f"## {title}", "", _rows_line(mine)]
    for paragraph in lead:
        parts += ["", paragraph]
    claims = [claim_row(f) for f in mine if f.figure.compared]
    measured = [claim_row(f) for f in mine if not f.figure.compared]
    if claims:
        parts += ["", table(COLUMNS, claims)]
    if measured:
        parts += ["", "Our measurements (the paper makes no claim: no verdict):", ""]
        parts += [table(MEASURED, measured)]
    return [*parts, *_plots(root, mine)]


def _gates_so_far(mine: list[Finding]) -> list[str]:
    """Where only the vanilla models have rows: their gates, each once, so that a reader sees
    whether the comparisons would count once the other arm runs."""
    seen: dict[tuple[str, str], str] = {}
    for f in mine:
        for g in f.gates:
            state = "passed" if g.passed else "no row yet" if math.isnan(g.value) else "failed"
            seen.setdefault((f.source.roles["vanilla"], g.text), state)
    if not seen:
        return []
    rows = [[f"`{m}`", text, state] for (m, text), state in seen.items()]
    lead = (
        "The vanilla models' gates on the rows so far (a claim is compared once the other arm "
        "has rows, and only where its gate passes):"
    )
    return ["", lead, "", table(["vanilla model", "gate", ""], rows)]


def _filed_away(root: Path | None, suites: list[str]) -> list[str]:
    """A paragraph naming the cells of `suites` whose rows were filed away (`_superseded/`),
    so that a reader knows they exist and why they are not compared; [] where none were."""
    if root is None:
        return []
    counts = {
        s: len({f.stem.split(".", 1)[0] for f in result_files(root / s / SUPERSEDED)})
        for s in suites
    }
    named = [f"{n} in `leaderboards/{s}/{SUPERSEDED}/`" for s, n in sorted(counts.items()) if n]
    if not named:
        return []
    return [
        "",
        f"Filed away, and not compared: the rows of cells these suites no longer have "
        f"({', '.join(named)}), computed under settings a suite or the code has changed since "
        "(each row's commit and configuration say which).",
    ]


def _scale_section(scale: Scale, found: list[Finding], root: Path | None) -> list[str]:
    """The claims a scale mapped from the first compares (`harness.paper.scales.Scale`)."""
    mine = [f for f in found if f.scale == scale.name]
    title = f"At {scale.name} scale: {' and '.join(scale.models.values())}"
    away = _filed_away(root, sorted({f.source.board for f in mine}))
    if not any(f.measured is not None for f in mine):
        some = any(f.machines for f in mine)
        state = "No figure has both arms' rows yet." if some else "No rows committed yet."
        head = ["", f"## {title}", "", _rows_line(mine), "", f"{state} {scale.pending}"]
        return head + away + _gates_so_far(mine)
    power = power_section(mine, f"### Power at {scale.name} scale")
    return _section(title, mine, root, "\n".join(tally(mine))) + away + power


def _paper_says(f: Finding) -> str:
    side = f.figure.paper_direction(f.role)
    values = f.figure.values
    numbers = (
        f" ({num(values['vanilla'])} → {num(values[f.role])})"
        if "vanilla" in values and f.role in values
        else ""
    )
    return f"{f.role} {side or '?'} than vanilla{numbers}"


def main_claims(found: list[Finding]) -> list[str]:
    """One row per main claim: what the paper says, and our answer at each scale in words."""
    scales = list(dict.fromkeys(f.scale for f in found))
    rows = []
    for key, role in paper_claims().main_claims():
        mine = [f for f in found if f.figure.key == key and f.role == role]
        if not mine:
            continue
        at = {f.scale: answer(f) for f in mine}
        rows.append([mine[0].figure.key, _paper_says(mine[0]), *(at.get(s, "-") for s in scales)])
    return ["## The main claims", "", table(["claim", "the paper", *scales], rows), ""]


def render(found: list[Finding], root: Path | None = None) -> str:
    """The whole page, in Markdown (with links to the plots committed under `root`)."""
    paper = paper_claims()
    cpu = [f for f in found if f.scale == paper.scales[0].name]
    parts = [
        "# The paper's claims, compared at CPU scale",
        "",
        "Generated by `hlm report --paper` from the committed leaderboards under "
        "`leaderboards/`: do not edit; run the suites and regenerate. The paper: Godey, de la "
        "Clergerie, Sagot, *Headless Language Models: Learning without Predicting with "
        "Contrastive Weight Tying*, ICLR 2024. Ours: the `paper-cpu-*` suites of `suites/` "
        "(tiny models, the real corpora of `$HLM_DATA_ROOT`), larger ones on Wikipedia and a "
        "GPU, and their speeds on a second CPU (the scale sections), then the diagnostics' "
        "suites; each row's commit, library versions, machine and configuration are in its file.",
        "",
        *main_claims(found),
        f"**{headline(found)}**",
        "",
        HOW,
        "",
        *tally(cpu),
        *_figure_link(found),
    ]
    for claim, section in paper.sections.items():
        mine = [f for f in cpu if f.figure.claim == claim]
        parts += _section(section.title, mine, root)
    parts += power_section(cpu)
    parts += not_attempted([[n.source, n.what, n.why] for n in paper.not_attempted])
    for scale in paper.mappings():
        parts += _scale_section(scale, found, root)
    parts += gate_section(found)
    parts += diagnostic_sections(root) if root is not None else []
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
    write_text(doc, render(found, root))
    written = [doc]
    for figure in (
        write_forest(found, doc.parent / FIGURE),
        write_gate_figure(found, doc.parent / GATES_FIGURE),
    ):
        written += [figure] if figure is not None else []
    if readme is not None and readme.exists():
        text = readme.read_text(encoding="utf-8")
        new, n = HEADLINE.subn(lambda m: m.group(1) + headline(found) + m.group(3), text)
        if n:
            write_text(readme, new)
            written.append(readme)
    return written
