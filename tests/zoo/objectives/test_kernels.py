"""The registry of linear cross-entropy kernels: its names are the ones the config accepts, an
unknown name is answered with close matches, and what a kernel cannot do is refused by name.
Each kernel's numbers against the plain loss: tests/zoo/objectives/test_chunked.py (CPU) and
tests/zoo/test_cuda.py (the vendors' kernels, `pytest -m cuda`)."""

from __future__ import annotations

from typing import get_args

import pytest
import torch

from zoo.errors import UserError
from zoo.objectives.declared import CEImpl, Impl
from zoo.objectives.kernels import KERNELS


def test_every_impl_the_config_accepts_is_plain_auto_or_a_registered_kernel() -> None:
    assert set(get_args(Impl)) - {"plain", "auto"} == set(KERNELS)
    assert set(get_args(CEImpl)) - {"plain"} == set(KERNELS)  # each serves both losses


def test_an_unknown_kernel_is_answered_with_close_matches() -> None:
    with pytest.raises(UserError, match="chunked"):
        KERNELS.get("chunkd")


def test_the_built_in_kernels_run_anywhere_and_the_vendors_only_on_cuda() -> None:
    built_in = {name for name, k in KERNELS.items() if k.vendor is None}
    assert built_in == {"chunked", "recompute", "torch"}
    for name, kernel in KERNELS.items():
        assert kernel.available("cpu") == (name in built_in)
        if name in built_in:
            kernel.check_device("cpu", "loss.cwt_impl")  # nothing to refuse
        else:
            with pytest.raises(UserError, match=rf"^loss.cwt_impl: '{name}' runs .*CUDA only"):
                kernel.check_device("cpu", "loss.cwt_impl")


@pytest.mark.parametrize("name", KERNELS.names())
def test_a_kernel_that_cannot_mask_refuses_excluded_columns_by_name(name: str) -> None:
    x, w, t = torch.randn(6, 4), torch.randn(6, 4), torch.arange(6)
    ids = torch.tensor([0, 0, 1, 2, 3, 4])
    kernel = KERNELS.get(name)
    if kernel.masks:
        out = kernel(x, w, t, exclude=(ids, ids), chunk=4)
        assert out.dtype == torch.float32 and torch.isfinite(out)
    else:
        with pytest.raises(ValueError, match=rf"impl='{name}' does not support duplicates='mask'"):
            kernel(x, w, t, exclude=(ids, ids))
