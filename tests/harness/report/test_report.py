"""hlm report: one offline HTML page. Parsed here (tables, marks, embedded figures, nothing
fetched from elsewhere), then loaded in a real headless Chromium: figures decoded, a sorted
view, and a screenshot."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.results.leaderboard import write_cell
from tests.harness.results.test_leaderboard import record_baseline, row


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, object]] = []
        self.images: list[str] = []
        self.links: list[str] = []
        self.body: dict[str, str | None] = {}
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"task": a.get("data-task"), "head": [], "rows": []})
        elif tag in ("th", "td"):
            self._cell = []
            if tag == "td" and "data-value" in a:
                self.tables[-1]["rows"][-1].append(a["data-value"])  # type: ignore[index]
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])  # type: ignore[attr-defined]
        elif tag == "img":
            self.images.append(a["src"] or "")
        elif tag in ("a", "link", "script") and (a.get("href") or a.get("src")):
            self.links.append(a.get("href") or a.get("src") or "")
        elif tag == "body":
            self.body = a

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "th" and self._cell is not None:
            self.tables[-1]["head"].append("".join(self._cell))  # type: ignore[attr-defined]
        if tag in ("th", "td"):
            self._cell = None


def _leaderboard(root: Path) -> Path:
    d = root / "lb" / "board"
    for m, (loss, speed) in {
        "slow-cwt": (2.0, 100.0),
        "fast-ce": (3.0, 900.0),
        "mid": (2.5, 500.0),
    }.items():
        rows = [row(m, "val_loss", loss + s / 10, seed=s) for s in (0, 1)]
        rows += [row(m, "tokens_per_s", speed + s, seed=s, task="throughput") for s in (0, 1)]
        write_cell(d, m, rows)
    return d


def test_the_page_holds_tables_figures_and_no_outside_resource(tmp_path: Path, capsys) -> None:
    _leaderboard(tmp_path)
    assert hlm(["report", "board", "--leaderboards", str(tmp_path / "lb")]) == 0
    page_path = Path(capsys.readouterr().out.strip())
    page = Page()
    page.feed(page_path.read_text())
    assert [t["task"] for t in page.tables][:2] == ["validation", "throughput"]
    assert page.tables[0]["head"] == ["model", "val_loss"]
    assert len(page.tables[0]["rows"]) == 4  # the header row and 3 models
    assert page.images and all(i.startswith("data:image/png;base64,") for i in page.images)
    assert base64.b64decode(page.images[0].split(",", 1)[1])[:4] == b"\x89PNG"
    assert page.links == []  # no CDN, no font, no script from elsewhere
    assert "Provenance" in page_path.read_text()


def test_the_page_names_a_cell_cut_off_before_its_final_checkpoint(tmp_path: Path) -> None:
    d = _leaderboard(tmp_path)
    write_cell(d, "late.step-0000004", [row("late", "val_loss", 9.0, step=4)])
    assert hlm(["report", "board", "--leaderboards", str(tmp_path / "lb")]) == 0
    text = (d / "report.html").read_text()
    assert "not shown: late seed 0 validation (steps 4 only; its final checkpoint" in text
    page = Page()
    page.feed(text)
    assert len(page.tables[0]["rows"]) == 4  # the three models with a final row, no "late"


def test_the_page_names_a_result_file_that_does_not_read(tmp_path: Path) -> None:
    """A page that may be mailed says which rows it could not show, as the terminal does."""
    d = _leaderboard(tmp_path)
    (d / "mid.parquet").write_bytes(b"")
    with pytest.warns(UserWarning, match="mid.parquet: skipped"):
        assert hlm(["report", "board", "--leaderboards", str(tmp_path / "lb")]) == 0
    text = (d / "report.html").read_text()
    assert f"not shown: the rows of {d / 'mid.parquet'}, which does not read (not a" in text
    page = Page()
    page.feed(text)
    assert len(page.tables[0]["rows"]) == 3  # the header row and the two files that read


def test_the_provenance_lists_each_rows_library_versions(tmp_path: Path) -> None:
    d = _leaderboard(tmp_path)
    pinned = '{"torch": "2.13.0", "transformers": "5.0.0"}'
    write_cell(d, "pinned", [{**row("pinned", "val_loss", 2.2), "versions": pinned}])
    assert hlm(["report", "board", "--leaderboards", str(tmp_path / "lb")]) == 0
    text = (d / "report.html").read_text()
    assert "<li><code>torch 2.13.0, transformers 5.0.0</code></li>" in text


def test_the_provenance_names_the_machines_each_models_rows_record(tmp_path: Path) -> None:
    """Per model, the machines its rows record; rows that record none are counted, never
    given another row's machine."""
    d = _leaderboard(tmp_path)
    xeon = "cpu x1: Intel(R) Xeon(R) Processor"
    write_cell(d, "named", [{**row("named", "val_loss", 2.2), "hardware": xeon}])
    write_cell(
        d,
        "mixed",
        [
            {**row("mixed", "val_loss", 2.2, seed=0), "hardware": xeon},
            row("mixed", "val_loss", 2.3, seed=1),
        ],
    )
    assert hlm(["report", "board", "--leaderboards", str(tmp_path / "lb")]) == 0
    provenance = (d / "report.html").read_text().split("<h2>Provenance</h2>")[1]
    page = Page()
    page.feed(provenance)
    assert page.tables[0]["head"][-1] == "trained on"
    rows = [
        re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", provenance, re.S)
    ]
    machine = {r[0]: r[-1] for r in rows if r}
    assert machine["named"] == xeon
    assert machine["mixed"] == f"{xeon} (1 of 2 rows: not recorded)"
    assert set(machine.values()) - {xeon, machine["mixed"]} == {"not recorded"}


def _chromium() -> str:
    """Debian's headless Chromium. CI (`.ci/run` installs it) fails without it; elsewhere the
    browser test is skipped with the reason, so `make test` passes on a fresh machine."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.environ.get("CI") == "true":
        pytest.fail("chromium not found: `.ci/run` installs it before `make test`")
    if found is None:
        pytest.skip("the browser test needs Chromium (`apt-get install chromium`); CI runs it")
    return found


def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    d = _leaderboard(tmp_path)
    hlm(["report", "board", "--leaderboards", str(tmp_path / "lb")])
    url = (
        f"file://{d / 'report.html'}#sort=throughput/tokens_per_s"  # the table shows fastest first
    )
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1280,1600",
    ]
    dom = subprocess.run(
        [_chromium(), *flags, "--virtual-time-budget=5000", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    page = Page()
    page.feed(dom.stdout)
    assert int(page.body["data-figures-shown"] or 0) == len(page.images) > 0  # all decoded
    throughput = next(t for t in page.tables if t["task"] == "throughput")
    values = [float(r[0]) for r in throughput["rows"][1:]]  # type: ignore[index]
    assert values == sorted(values) and values != sorted(values, reverse=True)  # slowest first
    shot = tmp_path / "report.png"
    subprocess.run(
        [_chromium(), *flags, f"--screenshot={shot}", url],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 20_000


def test_the_page_and_the_terminal_table_correct_over_one_family(tmp_path: Path, capsys) -> None:
    """`hlm report` and `hlm leaderboard` mark against the suite's baseline over the same
    comparisons, and say how many."""
    import re

    d = tmp_path / "lb" / "board"
    for seed, (b, gain) in enumerate([(0.50, 0.02), (0.52, 0.05), (0.54, 0.01)]):
        rows = [row("base", "accuracy", b, seed, task=t) for t in ("glue/a", "glue/b")]
        rows += [row("m", "accuracy", b + gain, seed, task=t) for t in ("glue/a", "glue/b")]
        write_cell(d, f"c{seed}", rows)
    record_baseline(d, "base", ("base", "m"))
    args = ["--leaderboards", str(tmp_path / "lb")]
    assert hlm(["leaderboard", "board", *args, "--width", "400"]) == 0
    table = capsys.readouterr().out
    assert hlm(["report", "board", *args]) == 0
    page = (d / "report.html").read_text()
    said = [re.findall(r"over the leaderboard's (\d+) comparisons", t) for t in (table, page)]
    assert said == [["2"], ["2"]]
