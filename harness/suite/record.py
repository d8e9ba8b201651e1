"""The suite as run, kept beside its leaderboard: `_suite.yaml` and its plugin files.

A leaderboard folder holds the suite that made its rows (`_suite.yaml`, includes merged), read
back by `hlm leaderboard` for its baseline and published with the rows. A suite's plugin files
(a user's objective, preset or task type) are code its rows depend on, and their contents are
part of the cell ids; a leaderboard without them could not be run again or read. So each one
is copied into the folder's `_plugins/`, and `_suite.yaml` names those copies: the folder is a
suite that runs (`hlm run leaderboards/NAME/_suite.yaml`) to the same cell ids, and a published
leaderboard carries the code of its objective. Other files a suite names by a path relative to
its folder (a corpus file, an lm-eval task folder) are data or tasks, not kept here: a record
of such a suite names files beside the original suite.

    leaderboards/mine/_suite.yaml         plugins: [_plugins/cosine_cwt.py]
    leaderboards/mine/_plugins/cosine_cwt.py
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.suite.schema import Suite
from zoo.reader import MAX_TEXT_BYTES, read_bytes
from zoo.writer import inside, write_bytes, write_text

SUITE_FILE = "_suite.yaml"
PLUGINS = "_plugins"


def write_suite_record(out: Path, suite: Suite) -> None:
    """`suite` as `out/_suite.yaml`, its plugin files copied into `out/_plugins/` under their
    file names (a suite's plugins have distinct ones: `harness.suite.loading.load_plugins`) and
    named there; copies of plugins the suite no longer has are removed."""
    data = suite.model_dump(mode="json")
    sources = suite.plugin_paths()
    kept = out / PLUGINS
    if sources:
        kept.mkdir(parents=True, exist_ok=True)
    for source in sources:
        target = inside(out, PLUGINS, source.name, what="plugin file")
        if not (target.exists() and target.resolve() == source.resolve()):  # run from the record
            write_bytes(target, read_bytes(source, "a plugin file", MAX_TEXT_BYTES))
    names = {s.name for s in sources}
    if kept.is_dir() and not kept.is_symlink():
        for f in kept.iterdir():
            if f.name not in names:
                f.unlink()
    data["plugins"] = [f"{PLUGINS}/{s.name}" for s in sources]
    write_text(out / SUITE_FILE, yaml.safe_dump(data, sort_keys=False))
