"""`hlm plot SUITE`: figures of a suite's leaderboard (`harness.report.plots.make_plots`), as
PNG, PDF or SVG, each said as new, replaced or unchanged.

    hlm plot paper-cpu-encoder                       # PNG into leaderboards/<suite>/_plots
    hlm plot paper-cpu-encoder --format pdf svg --output-dir figs   # for a paper
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.flags import add_leaderboards, add_output_dir
from zoo.errors import UserError
from zoo.reader import MAX_IMAGE_BYTES, read_bytes

FORMATS = ("png", "pdf", "svg")  # what `harness.report.figures.save` writes


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", help="suite name or YAML path")
    add_output_dir(p, "the figures", default="leaderboards/<suite>/_plots")
    p.add_argument(
        "--format",
        nargs="+",
        choices=FORMATS,
        default=["png"],
        help="one or more of png (a palette image), pdf and svg (vector, for a paper); "
        "default: png",
    )
    add_leaderboards(p)


def run(args: argparse.Namespace) -> int:
    from harness.cli.leaderboard import read_rows
    from harness.report.plots import make_plots
    from harness.results.leaderboard import current_cells
    from harness.results.samples import read_samples
    from zoo.writer import inside

    directory, df = read_rows(args.leaderboards, args.suite)
    out = Path(args.output_dir) if args.output_dir else inside(directory, "_plots")
    formats = tuple(dict.fromkeys(args.format))
    kept = [p for f in formats for p in out.glob(f"*.{f}")] if out.is_dir() else []
    before = {p.name: _png(p) for p in kept}
    made = make_plots(df, out, read_samples(directory, current_cells(directory)), formats)
    said = {"new": 0, "replaced": 0, "unchanged": 0}
    for f in made:
        was = before.get(Path(f).name)
        state = "new" if was is None else "unchanged" if was == _png(Path(f)) else "replaced"
        said[state] += 1
        print(f"{f}" + ("" if state == "unchanged" else f" ({state})"))
    print(f"{len(made)} plots in {out}: " + ", ".join(f"{n} {k}" for k, n in said.items()))
    return 0


def _png(path: Path) -> bytes | None:
    """A plot already there, to tell new from unchanged (None: not a file we would read)."""
    try:
        return read_bytes(path, "a plot", MAX_IMAGE_BYTES, links=False)
    except UserError:
        return None
