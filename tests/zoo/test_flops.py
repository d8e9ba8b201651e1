"""The analytic FLOP count of every preset's body matches torch's own count of the matrix
products it runs (`FlopCounterMode`), whatever its blocks: multi-head or grouped-query
attention, two-matrix or gated feed-forward, tied or untied head."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from zoo.flops import body_forward_flops
from zoo.models import PRESETS, get_spec


@pytest.mark.parametrize("preset", list(PRESETS))
def test_body_flops_match_torchs_count(preset: str) -> None:
    spec = get_spec(preset, 1000)  # the body's FLOPs do not depend on the vocabulary
    model = spec.build()
    model.set_attn_implementation("eager")  # attention as matrix products torch counts
    batch, seq = 2, 16
    ids = torch.randint(2, 1000, (batch, seq))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        spec.body(model, ids, None)
    measured = counter.get_total_flops()
    assert body_forward_flops(spec, batch, seq) == pytest.approx(measured, rel=0.02)


def test_grouped_query_attention_and_a_gated_mlp_change_the_count() -> None:
    spec = get_spec("llama-tiny")
    d, i = spec.hidden_size, spec.intermediate_size
    assert spec.kv_size == d // 2  # 4 query heads share 2 key / value heads
    assert spec.layer_params() == 2 * d * d + 2 * d * (d // 2) + 3 * d * i
