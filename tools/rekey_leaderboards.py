"""File committed leaderboard rows written under the cell ids of the code before the typed run
config (commit 0029352) under the ids the current code gives the same cells, so that
`hlm run` resumes them instead of computing them again and filing them away.

    .venv/bin/python tools/rekey_leaderboards.py paper-cpu-encoder paper-cpu-decoder  # the plan
    .venv/bin/python tools/rekey_leaderboards.py --apply paper-cpu-encoder            # do it

For each suite: the old code (a git worktree of `--old-commit`) expands the suite as last run
(`leaderboards/<suite>/_suite.yaml`) and must give exactly the cells of its `_cells.json`; the
current code expands `suites/<suite>.yaml`; `harness.run.rekey.pair` matches them and refuses
a pair whose pretraining differs on any field the current key reads. `--apply` then renames
the files, rewrites the ids in the rows (values untouched) and records the current suite and
cells, as `hlm run` does. Old cells without a current counterpart are left to be filed away.

`--joined SETTING` names a setting that joined the key after the rows were written, and so
what its difference means (`harness.run.rekey.JOINED`): `score_dtype`, for the bf16 rows
keyed before `loss.score_dtype` (commit 0df0b87; `--old-commit 396f0e8`):

    .venv/bin/python tools/rekey_leaderboards.py --old-commit 396f0e8 --joined score_dtype \
        --apply paper-gpu-encoder paper-gpu-decoder gpu-finetune-lr
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.results.leaderboard import CURRENT, current_cells
from harness.run.cells import expand
from harness.run.rekey import JOINED, SameComputation, apply, pair, read_old_cells
from harness.run.runner import record_suite
from harness.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]
EXPORT = ROOT / "tools" / "export_old_cells.py"


def _export(old_tree: Path, snapshot: Path, out: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(old_tree)}
    with out.open("w") as f:
        done = subprocess.run(
            [sys.executable, str(EXPORT), str(snapshot)], env=env, cwd=old_tree, stdout=f
        )
    if done.returncode != 0:  # its own message is on stderr above
        sys.exit(f"{snapshot}: the old code cannot expand it (written by newer code: re-keyed?)")


def rekey(
    suite_name: str, old_tree: Path, root: Path, do_apply: bool, same: SameComputation | None
) -> None:
    folder = root / suite_name
    with tempfile.TemporaryDirectory() as tmp:
        cells_file = Path(tmp) / "cells.jsonl"
        _export(old_tree, (folder / "_suite.yaml").resolve(), cells_file)
        old = read_old_cells(cells_file)
    if {o.cell_id for o in old} != current_cells(folder):
        sys.exit(f"{folder / CURRENT}: the old code does not give these cells; not re-keyed")
    suite = load_suite(ROOT / "suites" / f"{suite_name}.yaml")
    new = expand(suite)
    moves, unpaired = pair(old, new, same)
    fresh = len(new) - len(moves)
    print(
        f"{suite_name}: {len(moves)} cells re-keyed, {len(unpaired)} old cells without a "
        f"current one (or computed differently now), {fresh} current cells new"
    )
    for o in unpaired:
        print(f"  to file away: {o.cell_id} ({o.config['model']}, seed {o.config['seed']})")
    if do_apply:
        n = apply(folder, moves)
        record_suite(folder, suite, new)
        print(f"  {n} files moved")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("suites", nargs="+", help="suite names (folders of --leaderboards)")
    p.add_argument("--old-commit", default="0029352^", help="the commit whose code wrote the ids")
    p.add_argument("--leaderboards", type=Path, default=ROOT / "leaderboards")
    p.add_argument("--apply", action="store_true", help="move the files (default: the plan)")
    p.add_argument(
        "--joined",
        choices=sorted(JOINED),
        help="a setting that joined the key after the rows: which differences it explains",
    )
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "old"
        subprocess.run(
            [
                "git",
                "-C",
                str(ROOT),
                "worktree",
                "add",
                "-q",
                "--detach",
                str(tree),
                args.old_commit,
            ],
            check=True,
        )
        try:
            for name in args.suites:
                same = JOINED[args.joined] if args.joined else None
                rekey(name, tree, args.leaderboards, args.apply, same)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)])


if __name__ == "__main__":
    main()
