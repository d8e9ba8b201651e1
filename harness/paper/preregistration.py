"""Pre-registration you can check: a claim is confirmatory only if git says its declaration
came before every row it is judged on.

    registered = register(path, claims.declared(), root)   # {(scale, claim id): Registration}
    declared = demoted(claims.declared(), registered)      # late claims judged as exploratory

A claims file may say "declared before any row"; its git history says whether it was. A
claim's declaration is the commit since which its text (the claim, and the mapping of the
scale it is judged at) reads as it does now: changing a declared claim starts its clock
again. A file, or a claim, not committed as it reads now has no declaration yet. Its rows are
those of its suite's leaderboard for the models its arms name; the earliest row's timestamp
is when its evidence began. A claim whose declaration is missing or not strictly before that
is judged and shown as exploratory, whatever the file says (`confirmatory: true`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from harness.paper.findings import Declared, Finding
from harness.results.leaderboard import read_leaderboard
from zoo.yaml_files import read_yaml

Key = tuple[str, str]  # (scale, claim id)


@dataclass(frozen=True)
class Registration:
    """When a claim was declared (`commit`, `date`; None: not committed as it reads now) and
    when its first row was written (None: no rows yet)."""

    commit: str | None
    date: datetime | None
    first_row: datetime | None
    asked: bool  # the file calls it confirmatory

    @property
    def confirmatory(self) -> bool:
        """Declared as confirmatory, committed, and before any of its rows."""
        if not self.asked or self.date is None:
            return False
        return self.first_row is None or self.date < self.first_row

    def words(self) -> str:
        """Its status and dates, for the page."""
        declared = (
            f"{self.commit[:10]} ({self.date:%Y-%m-%d %H:%M} UTC)"
            if self.commit and self.date
            else "not committed"
        )
        if not self.asked:
            return f"exploratory as declared; declared {declared}"
        if self.confirmatory:
            return f"confirmatory: declared {declared}, before its rows"
        rows = f"{self.first_row:%Y-%m-%d %H:%M} UTC" if self.first_row else "-"
        return f"exploratory: declared {declared}, not before its first row ({rows})"


def _git(repo: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    out = subprocess.run([git, "-C", str(repo), *args], capture_output=True, timeout=60)
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def _texts(data: Any) -> dict[Key, str]:
    """(scale, claim id) -> the claim's text as declared: its own keys and its scale's
    mapping (a `like` scale judges the claims of the scale it maps)."""
    if not isinstance(data, dict) or not isinstance(data.get("scales"), list):
        return {}
    scales = [s for s in data["scales"] if isinstance(s, dict)]
    own = {s.get("name"): s.get("claims") or [] for s in scales}
    out = {}
    for scale in scales:
        mapping = {k: v for k, v in scale.items() if k != "claims"}
        claims = own.get(scale.get("like"), []) if scale.get("like") else own[scale.get("name")]
        for claim in claims:
            if isinstance(claim, dict) and "id" in claim:
                text = json.dumps({"scale": mapping, "claim": claim}, sort_keys=True, default=str)
                out[(str(scale.get("name")), str(claim["id"]))] = text
    return out


def declarations(path: Path) -> dict[Key, tuple[str, datetime]]:
    """(scale, claim id) -> the commit (and its date) since which the claim reads as the file
    does now; a claim the working file changed, or a file outside git, has none."""
    path = path.resolve()
    top = _git(path.parent, "rev-parse", "--show-toplevel")
    if top is None:
        return {}
    repo = Path(top.strip()).resolve()
    rel = path.relative_to(repo).as_posix()
    log = _git(repo, "log", "--format=%H %cI", "--", rel) or ""
    now = _texts(read_yaml(path))
    found: dict[Key, tuple[str, datetime]] = {}
    pending = dict(now)
    for line in log.splitlines():  # newest first
        sha, date = line.split(" ", 1)
        then = _texts(yaml.safe_load(_git(repo, "show", f"{sha}:{rel}") or ""))
        for key in list(pending):
            if then.get(key) == pending[key]:
                found[key] = (sha, datetime.fromisoformat(date))  # an older commit, the same text
            else:
                del pending[key]  # changed here: its declaration is the commit found last
    return found


def _first_rows(root: Path, declared: list[Declared]) -> dict[str, pd.DataFrame]:
    boards = {source.board for _, _, source in declared}
    return {b: read_leaderboard(root / b, damaged="refuse") for b in boards if (root / b).is_dir()}


def register(path: Path, declared: list[Declared], root: Path) -> dict[Key, Registration]:
    """Each declared claim's registration: its declaration from git, its first row."""
    dates = declarations(path)
    rows = _first_rows(root, declared)
    out = {}
    for scale, figure, source in declared:
        board = rows.get(source.board)
        mine = (
            board[board["model"].isin(list(source.roles.values()))]
            if board is not None and not board.empty
            else None
        )
        first = None if mine is None or mine.empty else mine["timestamp"].min().to_pydatetime()
        commit, date = dates.get((scale, figure.ident), (None, None))
        out[(scale, figure.ident)] = Registration(commit, date, first, figure.compared)
    return out


def mark(found: list[Finding], registered: dict[Key, Registration]) -> None:
    """Each finding's declaration in words (`Finding.declared`) and whether it came after
    its rows (`Finding.late`); a late claim that could be compared says so in its reason,
    with what a trend left untested (the page says once that such rows keep raw p and 95 %)."""
    for f in found:
        r = registered[(f.scale, f.figure.ident)]
        f.declared, f.late = r.words(), r.asked and not r.confirmatory
        if f.late and f.blocked is None:
            untested = f"; {f.measured.untested}" if f.measured and f.measured.untested else ""
            f.reason = f"{r.words()}{untested}"


def demoted(declared: list[Declared], registered: dict[Key, Registration]) -> list[Declared]:
    """The declared claims, those not registered before their rows made exploratory."""
    return [
        (scale, figure, source)
        if registered[(scale, figure.ident)].confirmatory or not figure.compared
        else (scale, dataclasses.replace(figure, compared=False), source)
        for scale, figure, source in declared
    ]
