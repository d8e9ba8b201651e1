"""`hlm report SUITE`: one static HTML page a person can open anywhere, offline.

    hlm report quickstart          # leaderboards/quickstart/report.html

The page holds, in one file with no external resource (no CDN, no font, no script from
elsewhere): the suite's description; one sortable table per task (click a header; the cells
sort by their mean; `report.html#sort=TASK/METRIC[:desc]` opens a sorted view), with the
significance marks of `hlm leaderboard`; every figure of
`hlm plot`, embedded as PNG data; and the provenance of the rows: commits, library versions,
the budgets each model reached and the machines its rows record, and the machine the page
was made on.
"""

from __future__ import annotations

import base64
import html
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from harness.report.plots import make_plots
from harness.report.tables import pivot, pivot_means
from harness.report.view import leaderboard_view
from harness.results.fields import versions as row_versions
from harness.results.leaderboard import (
    current_cells,
    final_rows,
    no_results,
    read_leaderboard,
    unread_files,
)
from harness.results.samples import read_samples
from harness.results.significance import family_size
from harness.suite import last_suite
from zoo.hardware import host
from zoo.reader import MAX_IMAGE_BYTES, read_bytes
from zoo.writer import write_text

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: right; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
th.sorted-asc::after { content: " \\25B2"; } th.sorted-desc::after { content: " \\25BC"; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5rem 0; }
.note { color: #555; font-size: 0.85rem; }
"""
SCRIPT = r"""
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var asc = !th.classList.contains("sorted-asc");
      table.querySelectorAll("th").forEach(function (h) { h.className = ""; });
      th.className = asc ? "sorted-asc" : "sorted-desc";
      function key(row) {
        var cell = row.cells[col], v = cell.getAttribute("data-value");
        return v === null ? cell.textContent : (v === "" ? NaN : parseFloat(v));
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (typeof x === "number" && typeof y === "number") {
          if (isNaN(x)) return 1; if (isNaN(y)) return -1;
          return asc ? x - y : y - x;
        }
        return asc ? String(x).localeCompare(String(y)) : String(y).localeCompare(String(x));
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
// the figures the browser could decode, for scripts that check the page
window.addEventListener("load", function () {
  var shown = Array.from(document.images).filter(function (i) { return i.naturalWidth > 0; });
  document.body.setAttribute("data-figures-shown", String(shown.length));
});
// a link to a sorted view: report.html#sort=TASK/METRIC (ascending) or #sort=TASK/METRIC:desc
(function () {
  var m = decodeURIComponent(location.hash).match(/^#sort=(.+)\/([^/:]+)(:desc)?$/);
  if (!m) return;
  document.querySelectorAll("table.sortable").forEach(function (table) {
    if (table.getAttribute("data-task") !== m[1]) return;
    table.querySelectorAll("th").forEach(function (th) {
      if (th.textContent.trim() !== m[2]) return;
      th.click();
      if (m[3]) th.click();
    });
  });
})();
"""


def _table(agg: pd.DataFrame, task: str) -> str:
    """One task's sortable table: models as rows, metrics as columns, `data-value` = mean."""
    part = agg[agg["task"] == task]
    shown, means = pivot(part), pivot_means(part)
    metrics = [c.removeprefix(f"{task}/") for c in shown.columns]
    head = "".join(f"<th>{html.escape(m)}</th>" for m in ["model", *metrics])
    body = []
    for model, cells in shown.iterrows():
        tds = [f"<td>{html.escape(str(model))}</td>"]
        for column, text in zip(shown.columns, cells, strict=True):
            mean = means[column].get(model)
            value = "" if mean is None or pd.isna(mean) else repr(float(mean))
            tds.append(f'<td data-value="{value}">{html.escape(str(text))}</td>')
        body.append(f"<tr>{''.join(tds)}</tr>")
    task_attr = html.escape(task, quote=True)
    return (
        f'<table class="sortable" data-task="{task_attr}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def embedded_figure(data: bytes, mime: str, alt: str, caption: str = "") -> str:
    """An image inside the page itself (a data URI: the page stays one offline file)."""
    note = f'<figcaption class="note">{html.escape(caption)}</figcaption>' if caption else ""
    return (
        f'<figure><img alt="{html.escape(alt)}" src="data:{mime};base64,'
        f'{base64.b64encode(data).decode()}">{note}</figure>'
    )


def _figures(df: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="hlm-report-") as tmp:
        files = make_plots(df, Path(tmp), samples)
        return [
            embedded_figure(
                read_bytes(f, "a figure", MAX_IMAGE_BYTES, links=False), "image/png", f.stem, f.name
            )
            for f in files
        ]


def _provenance(df: pd.DataFrame) -> str:
    shas = sorted({s for s in df["git_sha"].dropna() if s}) or ["(not recorded)"]
    versions = sorted({v for v in df["versions"].dropna()})
    latest = (
        final_rows(df)
        .groupby("model")[["step", "tokens_seen", "train_flops", "train_seconds"]]
        .max()
    )
    latest["trained on"] = df.groupby("model")["hardware"].agg(_machines)
    budgets = latest.reset_index().to_html(
        index=False, na_rep="", float_format=lambda x: f"{x:.3g}"
    )
    pinned = (", ".join(f"{lib} {ver}" for lib, ver in row_versions(v).items()) for v in versions)
    libs = "".join(f"<li><code>{html.escape(line)}</code></li>" for line in pinned)
    return (
        f"<p>headless-zoo commit{'s' if len(shas) > 1 else ''}: "
        f"{', '.join(f'<code>{html.escape(s)}</code>' for s in shas)}</p>"
        f"<p>library versions of the rows:</p><ul>{libs}</ul>"
        f"<p>budgets each model reached (latest evaluated checkpoint) and the machines its "
        f"rows record:</p>{budgets}"
        f'<p class="note">page made {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on '
        f"{html.escape(host())}</p>"
    )


def _machines(hardware: pd.Series) -> str:
    """The machines one model's rows record, with how many rows name none (rows written
    before the leaderboard kept the machine), so that no machine is said of them."""
    named = ", ".join(sorted(set(hardware.dropna())))
    unnamed = int(hardware.isna().sum())
    if not unnamed:
        return named
    return f"{named} ({unnamed} of {len(hardware)} rows: not recorded)" if named else "not recorded"


# an extra section of the page: (the leaderboard folder, the suite name) -> HTML ("" for none)
Section = Callable[[Path, str], str]


def build_report(directory: Path, name: str, sections: Sequence[Section] = ()) -> str:
    """The HTML page of the leaderboard in `directory`, with `sections` after the results
    (the CLI adds the paper's findings this way; this module knows nothing of the paper)."""
    df = read_leaderboard(directory)
    if df.empty:
        raise no_results(directory, name)
    suite = last_suite(directory)
    samples = read_samples(directory, current_cells(directory))
    baseline = suite.baseline if suite is not None else None
    # the terminal's columns (a trivial model's: majority, unigram_ppl) and notes, marked as
    # `hlm leaderboard` marks them; its footnote is said below in the page's words
    agg, notes = leaderboard_view(df, baseline, samples)
    notes = notes[1:] if baseline else notes
    tasks = sorted(set(agg["task"]), key=lambda t: (t.startswith("throughput"), t))
    tables = "".join(f"<h3>{html.escape(t)}</h3>{_table(agg, t)}" for t in tasks)
    family = family_size(agg) if baseline else 0
    mark = (
        f'<p class="note">† better, ‡ worse than the baseline <code>{html.escape(baseline)}'
        f"</code> at Holm-adjusted p &lt; 0.05 over the leaderboard's {family} comparisons "
        "(two-sided, the pretraining seed as the unit; no mark: inconclusive, not equal; "
        "best-epoch picks are not shown or tested); values are mean ± std over seeds at the "
        "final checkpoint. Click a header to sort.</p>"
        if baseline
        else '<p class="note">mean ± std over seeds at the final checkpoint. Click a header '
        "to sort.</p>"
    )
    mark += "".join(f'<p class="note">{html.escape(line)}</p>' for line in notes)
    mark += "".join(
        f'<p class="note">not shown: the rows of {html.escape(str(f))}, which does not read '
        f"({html.escape(why)}); <code>hlm run</code> of the suite computes its cell again</p>"
        for f, why in unread_files(directory)
    )
    description = html.escape(suite.description.strip()) if suite is not None else ""
    extra = "".join(section(directory, name) for section in sections)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>headless-zoo: {html.escape(name)}</title><style>{STYLE}</style></head><body>"
        f"<h1>headless-zoo leaderboard: {html.escape(name)}</h1><p>{description}</p>"
        f"<h2>Results</h2>{mark}{tables}"
        f"{extra}"
        f"<h2>Figures</h2>{''.join(_figures(df, samples))}"
        f"<h2>Provenance</h2>{_provenance(df)}"
        f"<script>{SCRIPT}</script></body></html>"
    )


def write_report(
    directory: Path, name: str, out_dir: Path | None = None, sections: Sequence[Section] = ()
) -> Path:
    """Write the page, `report.html`, into `out_dir` (default: `directory`), atomically; its
    path."""
    target = (out_dir if out_dir is not None else directory) / "report.html"
    page = build_report(directory, name, sections)  # an unknown suite fails here: no folder made
    return write_text(target, page)
