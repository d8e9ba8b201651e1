"""A leaderboard's Hub dataset card: the suite in a few lines, the table as `hlm leaderboard`
shows it, the plots, the schema and the citation.

Written with huggingface_hub's `DatasetCard`, so `DatasetCard.load` reads it back. The
dataset's configs split the final checkpoints' rows (the default) from those along
pretraining.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from harness.publish.cards import BIBTEX
from harness.report.tables import render
from harness.report.view import leaderboard_view
from harness.results.leaderboard import FINAL, current_cells, read_leaderboard
from harness.results.samples import read_samples
from harness.results.schema import SCHEMA_VERSION, column_table
from harness.suite import Suite, last_suite, overrides
from zoo.text import md_cell, md_code, md_heading


def suite_summary(suite: Suite | None, df: pd.DataFrame) -> list[str]:
    """The suite in a few lines: models, tasks, seeds, sweep, recipe (no YAML dump); every
    name from the rows or the suite file escaped for Markdown."""
    models = sorted(df["model"].unique()) if not df.empty else []
    lines = [f"- **models** ({len(models)}): {', '.join(f'`{md_code(m)}`' for m in models)}"]
    if suite is None:
        return lines
    lines += [
        f"- **tasks**: {', '.join(md_cell(t.label()) for t in suite.tasks)}",
        f"- **seeds**: {', '.join(str(s) for s in suite.seeds)}",
    ]
    if suite.sweep:
        lines.append(
            f"- **sweep**: {', '.join(md_cell(f'{k} over {v}') for k, v in suite.sweep.items())}"
        )
    recipe = overrides(suite.recipe)
    if recipe:
        lines.append(f"- **recipe**: {', '.join(md_cell(f'{k}={v}') for k, v in recipe.items())}")
    if suite.baseline:
        lines.append(f"- **baseline** of the significance tests: `{md_code(suite.baseline)}`")
    lines.append("- the whole suite: `suite.yaml` in this repository")
    if suite.plugins:  # as the leaderboard keeps them: `harness.suite.record`
        files = ", ".join(f"`{md_code(p)}`" for p in suite.plugins)
        lines.append(
            f"- the plugin files it loads, code its rows depend on (their contents are in the "
            f"cell ids): {files}"
        )
    return lines


def data_configs(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The dataset's configs: the final checkpoints' rows by default, the rows along
    pretraining apart (where there are any)."""
    configs: list[dict[str, Any]] = [
        {
            "config_name": "default",
            "data_files": [{"split": "train", "path": "data/final/*.parquet"}],
        }
    ]
    if not df.empty and not df[FINAL].astype(bool).all():
        configs.append(
            {
                "config_name": "along_pretraining",
                "data_files": [{"split": "train", "path": "data/steps/*.parquet"}],
            }
        )
    return configs


def dataset_card(name: str, directory: Path, repo: str, license: str, plots: list[str]) -> str:
    from huggingface_hub import DatasetCard, DatasetCardData

    df = read_leaderboard(directory, damaged="refuse")
    suite = last_suite(directory)
    baseline = suite.baseline if suite is not None else None
    samples = read_samples(directory, current_cells(directory))
    agg, notes = leaderboard_view(df, baseline, samples)  # as `hlm leaderboard` shows it
    data = DatasetCardData(
        license=license,
        tags=["headless-zoo", "leaderboard", "headless-lm"],
        pretty_name=f"headless-zoo {name} leaderboard",
        configs=data_configs(df),
    )
    cells = df["cell_id"].nunique() if not df.empty else 0
    parts = [
        f"# headless-zoo leaderboard: {md_heading(name)}",
        "",
        *(md_cell(line) for line in (suite.description.strip() if suite else "").splitlines()),
        "",
        f"{len(df)} rows from {cells} cells: one Parquet file per cell in `data/final/` (the "
        "default config: each run's final checkpoint, what `hlm leaderboard` shows), and the "
        "checkpoints along pretraining in `data/steps/` (config `along_pretraining`). Each "
        "row's `final_checkpoint` says which.",
        "",
        "## Suite",
        "",
        *suite_summary(suite, df),
        "",
        "## Results (mean ± std over seeds, final checkpoint)",
        "",
        render(agg, "md"),
        "",
        *[line for note in notes for line in (note, "")],
        *[f"![{p}](plots/{p})" for p in plots],
        "",
        "## Schema",
        "",
        f"Leaderboard schema {SCHEMA_VERSION}: every file holds every column below, of its type "
        "(`config`, `sweep` and `versions` are JSON objects as text).",
        "",
        column_table(),
        "",
        "## Citation",
        "",
        BIBTEX,
        "",
    ]
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(parts)))
