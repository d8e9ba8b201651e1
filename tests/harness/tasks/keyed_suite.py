"""A one-model suite written for a test of what a cell id keys, and its cells by task label."""

from __future__ import annotations

from pathlib import Path

from harness.run.cells import Cell, expand
from harness.suite import load_suite


def one_model_suite(folder: Path, tasks: str) -> Path:
    """A one-model suite with `tasks` (YAML list lines) in `folder`."""
    suite_file = folder / "s.yaml"
    suite_file.write_text(
        "name: s\nmodels:\n  - {preset: bert-tiny, objective: ce}\n"
        "recipe: {corpus: ['synthetic:100'], steps: 2, batch_size: 2, seq_len: 32, "
        "vocab_size: 400}\nseeds: [0]\ntasks:\n" + tasks
    )
    return suite_file


def cells_by_label(suite_file: Path) -> dict[str, Cell]:
    """The suite's cells by task label, as keyed now."""
    return {c.task.label(): c for c in expand(load_suite(suite_file))}
