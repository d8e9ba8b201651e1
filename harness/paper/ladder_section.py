"""The reproduction page's section on the instrument ladder: where pretraining shows.

`suites/cpu-ladder.yaml` pretrains ce and cwt models beside their untrained twins and scores
every checkpoint on the gated instruments. This section is `hlm leaderboard cpu-ladder
--separation` as Markdown: per model and instrument, the tokens and CPU-hours where every
seed's gap to the twins' mean first clears the gate's margin, and the operating point (the
cheapest checkpoint where a ce model clears two gates for good), which the pre-registered
verdict (`suites/cpu-operating-point.yaml`) was placed at. The figure is the ladder's own
`hlm plot cpu-ladder` output, linked where it is committed.
"""

from __future__ import annotations

from pathlib import Path

from harness.paper.tables import table
from harness.report.separation import SEPARATION_NOTE, point_lines, separation_table
from harness.results.leaderboard import read_leaderboard

LADDER = "cpu-ladder"  # the leaderboard this section reads, under the page's root


def ladder_section(root: Path) -> list[str]:
    """Markdown lines (linking from docs/); none where the ladder has no rows with a twin."""
    directory = root / LADDER
    df = read_leaderboard(directory) if directory.is_dir() else None
    if df is None or df.empty:
        return []
    found = separation_table(df)
    found = found[found["margin"] != "comparison"] if not found.empty else found
    if found.empty:
        return []
    columns = [str(c) for c in found.columns]
    rows = [[str(v) for v in row] for row in found.itertuples(index=False)]
    figure = f"../leaderboards/{LADDER}/_plots/separation.png"  # from docs/
    drawn = (directory / "_plots" / "separation.png").is_file()
    return [
        "",
        "## Where pretraining shows: the instrument ladder",
        "",
        f"`suites/{LADDER}.yaml`, read by `hlm leaderboard {LADDER} --separation`: each "
        "model's gap to its untrained twins' mean, per gated instrument. Our measurements, "
        "not the paper's.",
        "",
        table(columns, rows),
        "",
        _sentence(SEPARATION_NOTE),
        "",
        *_point(point_lines(df)),
        *(["", f"![The gap to the untrained twin along pretraining]({figure})"] if drawn else []),
    ]


def _point(lines: list[str]) -> list[str]:
    """The operating point as a sentence; where there is none, each model's standing listed."""
    head, *standing = lines
    return [_sentence(head), *(f"- {line}" for line in standing)]


def _sentence(line: str) -> str:
    line = line.strip()
    return line[0].upper() + line[1:] + "."
