"""Print a suite's cells as an older commit's code expanded them, one JSON object a line:
`cell_id`, `config` (what the id hashes) and `keyed` (what the pretraining key hashed, plugins
aside; null for a checkpoint). It reads both layouts: the code before the typed run config
(up to commit 0029352's parent: `harness.cells`, the config dumped without `_KEY_EXCLUDE`)
and the code since (`harness.run.cells`, `PretrainConfig.key_fields`).

Run with that code first on the path (`tools/rekey_leaderboards.py` does):

    PYTHONPATH=/path/to/old/worktree python tools/export_old_cells.py leaderboards/S/_suite.yaml

Each pretraining key is recomputed from `keyed` and checked against the one the old code
gave, so what is printed is what the old ids were made of.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from harness.suite import load_suite


def _keyed(pretrain: Any) -> dict[str, Any]:
    """What the pretraining key hashed, in the layout of the code on the path."""
    if hasattr(pretrain, "key_fields"):  # since the typed run config
        keyed: dict[str, Any] = pretrain.key_fields()
        return keyed
    old = importlib.import_module("harness.cells")
    return dict(pretrain.model_dump(exclude=old._KEY_EXCLUDE))


def main(path: str) -> None:
    try:
        cells = importlib.import_module("harness.run.cells")
    except ModuleNotFoundError:  # the layout before the typed run config
        cells = importlib.import_module("harness.cells")
    digest, expand, plugin_digests = cells.digest, cells.expand, cells.plugin_digests
    suite = load_suite(path)
    plugins = plugin_digests(suite.plugin_paths())
    for cell in expand(suite):
        keyed = None
        if cell.pretrain is not None:
            keyed = _keyed(cell.pretrain)
            if digest({**keyed, "plugins": plugins}) != cell.pretrain_key:
                sys.exit(f"{path}: cell {cell.cell_id}: its pretraining key does not recompute")
        line = {"cell_id": cell.cell_id, "config": cell.config, "keyed": keyed}
        print(json.dumps(line, sort_keys=True, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
