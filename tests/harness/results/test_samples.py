"""Per-example samples files: what is written reads back value for value, compressed so that
the committed files take about half the bytes of Parquet's defaults."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.samples import SAMPLE_SCHEMA, SAMPLES, read_samples, write_samples


def _rows(n: int = 20_000) -> list[dict[str, object]]:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    return [
        {
            "cell_id": "0123456789abcdef",
            "model": "bert-small-cwt",
            "sweep": "{}",
            "seed": 0,
            "step": 3100,
            "task": "synonyms",
            "metric": "synonym_cosine",
            "key": f"{i}|{rng.choice(words)}",
            "value": rng.uniform(-1, 1),
        }
        for i in range(n)
    ]


def test_samples_read_back_value_for_value(tmp_path: Path) -> None:
    rows = _rows(500)
    path = write_samples(tmp_path, "0123456789abcdef", rows)
    assert path == tmp_path / SAMPLES / "0123456789abcdef.parquet"
    assert read_samples(tmp_path).to_dict("records") == rows


def test_samples_are_compressed_and_the_keys_are_not_dictionary_encoded(tmp_path: Path) -> None:
    rows = _rows()
    path = write_samples(tmp_path, "0123456789abcdef", rows)
    assert path is not None
    column = {
        c.path_in_schema: c
        for c in (pq.ParquetFile(path).metadata.row_group(0).column(i) for i in range(9))
    }
    assert {c.compression for c in column.values()} == {"ZSTD"}
    assert not column["key"].has_dictionary_page and column["model"].has_dictionary_page
    default = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, SAMPLE_SCHEMA), default)
    assert path.stat().st_size < 0.75 * len(default.getvalue())
