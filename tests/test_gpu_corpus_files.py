"""tools/gpu_corpus_files.py: every file the suites' pretraining reads, as the GPU pack carries
it, and an error where a source names none or lies outside the data root."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import load_tool
from zoo.errors import UserError

ROOT = Path(__file__).parents[1]
gpu_corpus_files = load_tool("gpu_corpus_files")

SUITE = """name: pack
version: 1
baseline: bert-tiny-ce
models:
  - {{preset: bert-tiny, objective: ce}}
  - {{preset: bert-tiny, objective: cwt, recipe: {{corpus: [{other}]}}}}
recipe:
  corpus: ["{corpus}"]
  validation: [{validation}]
  vocab_size: 400
  steps: 6
  batch_size: 4
  seq_len: 32
seeds: [0]
tasks:
  - type: validation
"""


def _data(root: Path) -> Path:
    for name in ("AA/wiki_00", "AA/wiki_01", "AA/wiki_02", "AA/wiki_10", "AB/wiki_52"):
        f = root / "enwiki" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text('<doc id="1" url="u" title="t">\nt\n\nSome text here.\n</doc>\n')
    return root


def _suite(tmp_path: Path, **fields: str) -> Path:
    values = {
        "corpus": "enwiki/AA/wiki_0[0-9]",
        "validation": "enwiki/AB/wiki_52",
        "other": "synthetic:100",
        **fields,
    }
    path = tmp_path / "pack.yaml"
    path.write_text(SUITE.format(**values))
    return path


def test_every_file_each_model_reads_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HLM_DATA_ROOT", str(_data(tmp_path / "data")))
    suite = _suite(tmp_path, other="enwiki/AA/wiki_10")
    assert gpu_corpus_files.corpus_files([suite]) == [
        "enwiki/AA/wiki_00",
        "enwiki/AA/wiki_01",
        "enwiki/AA/wiki_02",
        "enwiki/AA/wiki_10",
        "enwiki/AB/wiki_52",
    ]
    # a synthetic source names no file; the other model still reads the glob
    assert "enwiki/AA/wiki_10" not in gpu_corpus_files.corpus_files([_suite(tmp_path)])


def test_a_file_outside_the_data_root_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HLM_DATA_ROOT", str(_data(tmp_path / "data")))
    outside = _data(tmp_path / "elsewhere") / "enwiki" / "AA" / "wiki_00"
    suite = _suite(tmp_path, other=str(outside))
    with pytest.raises(UserError, match=r"pack\.yaml: corpus source .*outside \$HLM_DATA_ROOT"):
        gpu_corpus_files.corpus_files([suite])
    assert gpu_corpus_files.main([str(suite)]) == 2


def test_the_gpu_suites_read_the_hundred_files_and_the_held_out_one(data_root: Path) -> None:
    suites = sorted((ROOT / "suites").glob("paper-gpu-*.yaml"))
    files = gpu_corpus_files.corpus_files(suites)
    assert files == [f"enwiki/AA/wiki_{i:02d}" for i in range(100)] + ["enwiki/AB/wiki_52"]
