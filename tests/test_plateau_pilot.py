"""tools/plateau_pilot.py: the go/no-go figures of a pilot, from its own folder: the unigram
bar, the validation CE by step, and each checkpoint's token-state diagnostics and STS-B
zero-shot cosine beside token overlap's."""

from __future__ import annotations

import math
from pathlib import Path

from tests.conftest import load_tool
from tests.tiny import TINY_RUN
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


def test_the_pilots_figures_come_from_its_folder(tmp_path: Path, capsys, data_root) -> None:
    tool = load_tool("plateau_pilot")
    run = tmp_path / "pilot"
    cfg = PretrainConfig(
        preset="bert-tiny", objective="ce", output_dir=str(run), steps=2, save_every=1
    )
    pretrain(cfg.model_copy(update={**TINY_RUN, "eval_every": 1}))
    tool.main([str(run)])
    lines = capsys.readouterr().out.splitlines()
    bar = float(lines[0].rpartition(" ")[2])
    assert lines[0].startswith("unigram CE on the validation text:") and math.isfinite(bar)
    assert [ln.split(":")[0] for ln in lines[1:4]] == ["step 0", "step 1", "step 2"]
    assert lines[4].startswith("STS-B dev, token overlap's Pearson: 0.650")
    probed = [ln for ln in lines[5:] if "token cosine" in ln and "mean-cosine" in ln]
    assert [Path(ln.split(":")[0]).name for ln in probed] == ["step-0000001", "final"]
