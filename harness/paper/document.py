"""`hlm report --paper`: docs/REPRODUCTION.md (and the README's headline) from the leaderboards.

    hlm report --paper                 # writes docs/REPRODUCTION.md, updates README.md

The page is generated, never edited: per claim of the paper, a table of the paper's figure
beside ours (`harness.paper.findings.findings`), the difference, the seeds, the significance
and a verdict in words with its one-line reason; a last section per other scale holds its
figures (GPU: the encoder and decoder ones from the `paper-gpu-*` suites), or says they are
not run yet. The README's headline sentence sits between
two markers and is rewritten from the same findings, so the two cannot disagree. A test
regenerates both from the committed leaderboards and checks they are unchanged.
"""

from __future__ import annotations

import html
import math
import re
from collections import Counter
from pathlib import Path

from harness.paper.figures import Role, Verdict
from harness.paper.findings import Finding, findings, gain_text
from harness.paper.sources import SCALES, Scale

TITLES = {
    "table1-tokens": "Table 1: GLUE at equal tokens",
    "table1-time": "Table 1: GLUE at equal training time",
    "figure3": "Figure 3: the GLUE gap along pretraining",
    "table3": "Table 3: LAMBADA and validation perplexity (decoders)",
    "table4": "Table 4: zero-shot tasks with local data",
    "table5": "Table 5: XNLI, multilingual encoders",
    "table6": "Table 6: the ablation (ce, ce + cwt, nce, cwt)",
    "figure2": "Figure 2: step latency vs batch size",
    "figure6": "Figure 6: the vocabulary sweep",
    "figure7": "Figure 7: the batch sweep",
    "appendix-a": "Appendix A: WordNet synonyms' embedding cosine",
    "duplicates": "CWT's duplicate targets: keep (the paper), mask, unique",
}
VERDICTS: tuple[Verdict, ...] = (
    "reproduced",
    "direction only",
    "not reproduced at this scale",
    "not comparable",
)
HEADLINE = re.compile(
    r"(<!-- reproduction-headline -->\n)(.*?)(\n<!-- /reproduction-headline -->)", re.S
)
NOTES = {
    "table1-tokens": "Our GLUE average is over the five tasks with a local train set (CoLA, "
    "SST-2, MRPC, STS-B, RTE); the paper's over its seven (no RTE; QNLI, QQP and MNLI "
    "need their train sets from the Hub).",
    "table1-time": "Training seconds as each run recorded them (one thread per run on a shared "
    "2-core machine, other runs beside it): they carry that machine's noise. Table 6 and "
    "Figure 2 hold the step times measured side by side.",
    "figure2": "Step latency is the machine's: the ratio, measured side by side, is the "
    "comparable figure.",
}
MAIN_CLAIM = "table1-tokens: GLUE average"
VERDICT_TEXT = (
    "Verdicts: *reproduced* (the paper's direction, significant at p < 0.05; every p "
    "is one-tailed, in the paper's direction), *direction only* (the paper's direction, "
    "not significant or not testable), *not reproduced at this scale* (the other "
    "direction), *not comparable* (no rows yet, or the vanilla model does not clear its sanity bar: a GLUE task above "
    "its majority baseline, a decoder at most half the unigram perplexity of the same "
    "tokens, a zero-shot accuracy above the majority answer). Paper and our values are "
    "in the paper's unit (percent where it uses percent); Δ: the role minus vanilla, "
    "sign-adjusted so that positive is better (a share of vanilla's value where shown in "
    "percent). Rows marked *our measurement* compare what the paper does not (CWT's "
    "duplicate modes, synonyms against chance, the batch sweep's validation loss) and "
    "carry no verdict; their p is two-sided (no direction was claimed)."
)
COLUMNS = ["figure", "paper", "ours", "paper Δ", "our Δ", "seeds", "p (test)", "verdict", "why"]


def _num(value: float | None, percent: bool = False) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value * (100 if percent else 1):.4g}"


def _pair(values: dict[Role, float], role: Role, percent: bool) -> str:
    if "vanilla" not in values or role not in values:
        return "-"
    return f"{_num(values['vanilla'], percent)} → {_num(values[role], percent)}"


def _row(f: Finding) -> list[str]:
    fig, pct = f.figure, f.figure.percent
    paper = _pair(fig.values, f.role, False) if fig.values else f"“{fig.stated}”"
    paper_gain = fig.paper_gain(f.role) if fig.values else None
    p = "-" if math.isnan(f.p_value) else f"{f.p_value:.3g} ({f.test})"
    why = f.reason + (f". {f.detail}" if f.detail else "")
    return [
        f"{fig.quantity}: {f.source.roles[f.role]} vs {f.source.roles['vanilla']}",
        paper,
        _pair(f.ours, f.role, pct),
        _num(paper_gain),
        gain_text(f.source, f.gain)
        if f.source.relative and not math.isnan(f.gain)
        else _num(f.gain, pct),
        str(f.seeds),
        p,
        f"**{f.verdict}**" if fig.compared else "our measurement",
        why,
    ]


def _table(rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return "\n".join([line(COLUMNS), line(["---"] * len(COLUMNS)), *map(line, rows)])


def _glue_clause(found: list[Finding]) -> str | None:
    """The verdict on the paper's main claim (GLUE average at equal tokens), if compared."""
    main = next((f for f in found if f.figure.key.startswith(MAIN_CLAIM)), None)
    if main is None:
        return None
    if math.isnan(main.gain):
        return f"GLUE at equal tokens has no result yet ({main.reason})"
    if main.verdict == "not comparable":
        return f"GLUE at equal tokens says nothing yet: {main.reason}"
    model = main.source.roles["headless"].removesuffix("-cwt")
    v, h = main.ours["vanilla"] * 100, main.ours["headless"] * 100
    return (
        f"the headless {model}'s GLUE average at equal tokens is {h:.1f} against the "
        f"vanilla one's {v:.1f} ({main.verdict})"
    )


def headline(found: list[Finding], suite: str | None = None) -> str:
    """The verdict on the paper's main claim (GLUE average at equal tokens) and the count of
    every verdict: one sentence per scale with rows (CPU always); `suite`: the findings are
    that suite's alone (its HTML page)."""
    sentences = []
    for scale in SCALES:
        mine = [f for f in found if f.scale == scale.name]
        ran = any(not math.isnan(f.gain) for f in mine)
        if not mine or (scale.name != "CPU" and not ran):
            continue
        claims = [f for f in mine if f.figure.compared]  # our own measurements: no verdict
        counts = Counter(f.verdict for f in claims)
        tally = ", ".join(f"{counts[v]} {v}" for v in VERDICTS)
        if suite is not None:
            over = f"the {len(claims)} figures of the paper that {suite} compares"
        elif scale.name == "CPU":
            over = f"all {len(claims)} figures of the paper"
        else:
            over = f"the {len(claims)} figures compared at that scale"
        glue = _glue_clause(mine)
        lead = f"{glue}; over {over}" if glue else f"over {over}"
        sentences.append(f"At {scale.name} scale, {lead}: {tally}.")
    return " ".join(sentences)


def _plots(root: Path | None, mine: list[Finding]) -> list[str]:
    """Links to the committed plots (`hlm plot SUITE`) of the tasks these findings read."""
    if root is None:
        return []
    links = []
    for f in mine:
        slug = f.source.task.replace("/", "_")
        folder = root / f.source.suite / "_plots"
        for png in sorted(folder.glob(f"*-{slug}*.png")):
            link = f"[{png.stem}](../leaderboards/{f.source.suite}/_plots/{png.name})"
            links += [link] if link not in links else []
    return ["", "Plots: " + ", ".join(links) + "."] if links else []


def _tally(found: list[Finding]) -> list[str]:
    return [
        "| verdict | figures |",
        "| --- | --- |",
        *(
            f"| {v} | {sum(f.verdict == v and f.figure.compared for f in found)} |"
            for v in VERDICTS
        ),
    ]


def _rows_line(mine: list[Finding]) -> str:
    """Which suites hold these findings' rows, and where they were trained (as recorded)."""
    names = sorted({f.source.suite for f in mine})
    suites = ", ".join(f"`{s}` (`hlm run {s}`)" for s in names)
    machines = sorted({m for f in mine for m in f.machines})
    return f"Our rows: {suites}" + (f"; trained on {', '.join(machines)}." if machines else ".")


def _section(title: str, mine: list[Finding], root: Path | None, *lead: str) -> list[str]:
    """A heading, the rows line, the `lead` paragraphs, the findings' table and plots."""
    parts = ["", f"## {title}", "", _rows_line(mine)]
    for paragraph in lead:
        parts += ["", paragraph]
    return [*parts, "", _table([_row(f) for f in mine]), *_plots(root, mine)]


def _scale_section(scale: Scale, found: list[Finding], root: Path | None) -> list[str]:
    """The figures a scale other than CPU compares (`harness.paper.sources.SCALES`)."""
    mine = [f for f in found if f.scale == scale.name]
    title = f"At {scale.name} scale: {' and '.join(scale.models.values())}"
    if not any(not math.isnan(f.gain) for f in mine):
        return ["", f"## {title}", "", _rows_line(mine), "", scale.pending]
    return _section(title, mine, root, "\n".join(_tally(mine)))


def render(found: list[Finding], root: Path | None = None) -> str:
    """The whole page, in Markdown (with links to the plots committed under `root`)."""
    cpu = [f for f in found if f.scale == "CPU"]
    parts = [
        "# The paper's claims, reproduced at CPU scale",
        "",
        "Generated by `hlm report --paper` from the committed leaderboards under "
        "`leaderboards/`: do not edit; run the suites and regenerate. The paper: Godey, de la "
        "Clergerie, Sagot, *Headless Language Models: Learning without Predicting with "
        "Contrastive Weight Tying*, ICLR 2024. Ours: the `paper-cpu-*` suites of `suites/` "
        "(tiny models, the real corpora of `$HLM_DATA_ROOT`), and the `paper-gpu-*` ones a "
        "size up on a GPU (last section); every row's commit, library versions, machine and "
        "configuration are in its Parquet file.",
        "",
        f"**{headline(found)}**",
        "",
        VERDICT_TEXT,
        "",
        *_tally(cpu),
    ]
    for claim, title in TITLES.items():
        mine = [f for f in cpu if f.figure.claim == claim]
        parts += _section(title, mine, root, *([NOTES[claim]] if claim in NOTES else []))
    for scale in SCALES:
        parts += _scale_section(scale, found, root) if scale.suites else []
    return "\n".join(parts) + "\n"


def render_html(found: list[Finding], suite: str) -> str:
    """`suite`'s findings as an HTML section (for `hlm report`)."""
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c.strip('*'))}</td>" for c in _row(f)) + "</tr>"
        for f in found
    )
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    return (
        f"<h2>The paper's figures beside ours</h2><p>{html.escape(headline(found, suite))}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def report_section(directory: Path, suite: str) -> str:
    """The paper's figures that `suite`'s rows give, as a section of `hlm report`'s page
    ("" when the suite feeds none)."""
    found = findings(directory.parent, suite=suite)  # reads this suite's rows only
    return render_html(found, suite) if found else ""


def write_reproduction(root: Path, doc: Path, readme: Path | None) -> list[Path]:
    """Write `doc` from the leaderboards under `root`, and the headline into `readme`."""
    found = findings(root)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(render(found, root), encoding="utf-8")
    written = [doc]
    if readme is not None and readme.exists():
        text = readme.read_text(encoding="utf-8")
        new, n = HEADLINE.subn(lambda m: m.group(1) + headline(found) + m.group(3), text)
        if n:
            readme.write_text(new, encoding="utf-8")
            written.append(readme)
    return written
