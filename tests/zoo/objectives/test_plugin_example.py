"""The README's plugin example is the tested file, and it trains."""

from __future__ import annotations

import re
from pathlib import Path

from zoo.objectives import OBJECTIVES
from zoo.registry import load_plugin
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain

ROOT = Path(__file__).parents[3]


def test_readme_example_is_examples_file() -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    example = (ROOT / "examples" / "cosine_cwt.py").read_text()
    assert example in blocks
    assert 15 <= len(example.splitlines()) <= 35


def test_plugin_objective_pretrains(tmp_path) -> None:
    load_plugin(ROOT / "examples" / "cosine_cwt.py", trusted=True)
    assert OBJECTIVES.get("cosine-cwt").headless
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cosine-cwt",
        output_dir=str(tmp_path / "r"),
        steps=3,
        batch_size=2,
        seq_len=32,
        vocab_size=300,
        corpus=["synthetic:100"],
        progress=False,
        plugins=[str(ROOT / "examples" / "cosine_cwt.py")],
    )
    assert (pretrain(cfg) / "model.safetensors").is_file()
