"""zoo.hardware: the processor a run used, as recorded in checkpoints and leaderboard rows."""

from __future__ import annotations

import pytest
import torch

from zoo.hardware import cpu_info, host, processor


def test_cpu_info_reads_the_model_and_the_matrix_extensions() -> None:
    text = (
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n"
        "flags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"
        "processor\t: 1\nmodel name\t: other\nflags\t\t: fpu\n"
    )
    assert cpu_info(text) == (
        "Intel(R) Xeon(R) Platinum 8480+",
        ("avx2", "avx512f", "avx512_bf16", "amx_bf16"),
    )
    assert cpu_info("model name : AMD EPYC\nflags : avx2 avx512f\n") == (
        "AMD EPYC",
        ("avx2", "avx512f"),
    )
    assert cpu_info("") == ("unknown", ())


def test_the_cpu_is_named_by_its_model() -> None:
    assert processor("cpu") == cpu_info()[0]


def test_a_gpu_is_named_by_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: f"NVIDIA H100 #{i}")
    assert processor("cuda") == "NVIDIA H100 #0"


def test_the_host_line_names_the_cpu_its_cores_and_extensions() -> None:
    model, isa = cpu_info()
    assert host().startswith(f"{model}, ") and host().endswith(", ".join(isa) or "amx_bf16")
    assert " threads of " not in host() and ", 3 threads of " in host(3)
