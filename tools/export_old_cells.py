"""Print a suite's cells as the code before the typed run config (up to commit 0029352's
parent) expanded them, one JSON object a line: `cell_id`, `config` (what the id hashes) and
`keyed` (what the pretraining key hashed, plugins aside; null for a checkpoint).

Run with that code first on the path (`tools/rekey_leaderboards.py` does):

    PYTHONPATH=/path/to/old/worktree python tools/export_old_cells.py leaderboards/S/_suite.yaml

Each pretraining key is recomputed from `keyed` and checked against the one the old code
gave, so what is printed is what the old ids were made of.
"""

from __future__ import annotations

import json
import sys

from harness.cells import _KEY_EXCLUDE, digest, expand, plugin_digests  # the old layout

from harness.suite import load_suite


def main(path: str) -> None:
    suite = load_suite(path)
    plugins = plugin_digests(suite.plugin_paths())
    for cell in expand(suite):
        keyed = None
        if cell.pretrain is not None:
            keyed = cell.pretrain.model_dump(exclude=_KEY_EXCLUDE)
            if digest({**keyed, "plugins": plugins}) != cell.pretrain_key:
                sys.exit(f"{path}: cell {cell.cell_id}: its pretraining key does not recompute")
        line = {"cell_id": cell.cell_id, "config": cell.config, "keyed": keyed}
        print(json.dumps(line, sort_keys=True, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
