"""`compile: true` runs the training step through torch.compile (inductor's C++ backend on the
CPU) and trains to the same losses as the eager step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from torch.testing import assert_close

from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain

RUN = dict(
    objective="cwt",
    corpus=["synthetic:200"],
    vocab_size=400,
    steps=3,
    batch_size=4,
    seq_len=32,
    progress=False,
    log_every=1,
    fast_dropout=False,
)


def _losses(out: Path) -> list[float]:
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in rows if "loss" in r]


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["pythia-tiny", "bert-tiny"])
# the loss is resolved before the compiled forward: Dynamo never traces the import cache
@pytest.mark.filterwarnings("error:Dynamo detected a call to a .functools.lru_cache")
def test_a_compiled_step_trains_like_the_eager_one(tmp_path: Path, preset: str) -> None:
    import torch._inductor.config

    # inductor draws dropout masks with its own generator (same distribution, other draws);
    # eager's generator here, so that the two runs see the same masks
    eager = tmp_path / "eager"
    pretrain(PretrainConfig(preset=preset, output_dir=str(eager), **RUN))
    compiled = tmp_path / "compiled"
    with torch._inductor.config.patch(fallback_random=True):
        pretrain(PretrainConfig(preset=preset, output_dir=str(compiled), compile=True, **RUN))
    assert_close(_losses(compiled), _losses(eager), rtol=1e-4, atol=1e-5)
