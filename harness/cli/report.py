"""`hlm report`: a page made from leaderboards: one suite's HTML report, the paper's claims
judged (`--paper`), or the claims a file declares judged (`--claims FILE`).

    hlm report paper-cpu-encoder                    # leaderboards/<suite>/report.html
    hlm report --paper                              # docs/REPRODUCTION.md and README's headline
    hlm report --claims suites/claims/cpu-encoder-probes.yaml
    hlm report paper-cpu-encoder --output-dir site  # site/report.html
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.flags import add_leaderboards, add_output_dir

PAPER_PAGE = Path("docs/REPRODUCTION.md")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "One self-contained HTML file (no CDN: opens offline): a sortable table per "
        "task with significance marks, every figure of `hlm plot`, and the rows' provenance "
        "(commits, versions, budgets reached, the machine the page was made on)."
    )
    p.add_argument("suite", nargs="?", help="suite name or YAML path")
    p.add_argument(
        "--paper",
        action="store_true",
        help="instead: the paper's claims (suites/claims/paper.yaml) judged from the paper-* "
        "leaderboards into docs/REPRODUCTION.md, its figures in docs/figures/ (verdicts.svg: "
        "the judged claims; gates.svg: the baselines' gates) and the headline sentence of "
        "./README.md",
    )
    p.add_argument(
        "--claims",
        metavar="FILE",
        help="instead: judge the claims a YAML file declares (per scale: suite, arms, task, "
        "metric, the direction or numbers stated, the design, the gates) from the "
        "leaderboards, into <leaderboards>/<name>-claims.md (see harness/paper/claims_file.py)",
    )
    add_output_dir(
        p,
        "the page (report.html, REPRODUCTION.md with --paper, NAME-claims.md with --claims) "
        "and its figures/; README.md is then left as it is",
        default="the suite's leaderboard folder; docs/ with --paper; --leaderboards with --claims",
    )
    add_leaderboards(p)


def run(args: argparse.Namespace) -> int:
    from zoo.errors import UserError

    if sum((args.paper, args.claims is not None, args.suite is not None)) > 1:
        raise UserError("hlm report: a suite, --paper or --claims FILE, one of them")
    out_dir = Path(args.output_dir) if args.output_dir else None
    if args.paper:
        return _paper_report(Path(args.leaderboards), out_dir)
    if args.claims is not None:
        from harness.paper.claims_page import write_claims_page

        for written in write_claims_page(Path(args.claims), Path(args.leaderboards), out_dir):
            print(written)
        return 0
    if args.suite is None:
        raise UserError("hlm report: name a suite, or pass --paper or --claims FILE")
    from harness.paper.document import report_section
    from harness.report.page import write_report
    from harness.suite import suite_name

    name = suite_name(args.suite)
    print(write_report(Path(args.leaderboards) / name, name, out_dir, [report_section]))
    return 0


def _paper_report(root: Path, out_dir: Path | None) -> int:
    """`hlm report --paper`: the project's page and the README's headline from leaderboards/
    (the page says it is made from there, and links its plots there), or with --output-dir
    a page of any folder written elsewhere."""
    from harness.paper.document import write_reproduction
    from zoo.errors import UserError

    doc = out_dir / PAPER_PAGE.name if out_dir is not None else PAPER_PAGE
    if root.resolve() != Path("leaderboards").resolve() and doc.resolve() == PAPER_PAGE.resolve():
        raise UserError(
            f"hlm report --paper: {PAPER_PAGE} and the README's headline are made from "
            f"leaderboards/; for a page of {root}, give --output-dir DIR (another folder)"
        )
    readme = None if out_dir is not None else Path("README.md")  # follows the project's page
    for path in write_reproduction(root, doc, readme):
        print(f"wrote {path}" + (" (its headline sentence)" if path == readme else ""))
    return 0
