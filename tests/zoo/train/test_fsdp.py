"""FSDP2 (`--strategy fsdp`) and sharded checkpoints, in real two-process gloo runs on the CPU:
FSDP trains as DDP does, global negatives under FSDP equal one process's loss on the whole
batch, and a run resumes at another world size (2 -> 1, 1 -> 2) from exactly the state it
saved, reading the samples it had not read yet."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.testing import assert_close

from zoo.train.config import PretrainConfig
from zoo.train.loop import first_sample
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain
from zoo.train.roles import flag_of
from zoo.train.sharded import SHARDED

ROOT = Path(__file__).parents[3]
RUN = {
    "objective": "cwt",
    "steps": 4,
    "batch_size": 8,
    "micro_batch_size": 2,
    "seq_len": 32,
    "vocab_size": 400,
    "corpus": ["synthetic:200"],
    "log_every": 1,
    "save_at_steps": [2],
}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _flags(settings: dict) -> list[str]:
    out = []
    for key, value in settings.items():
        fields = PretrainConfig.model_fields  # --resume is no field
        flag = flag_of(key, fields[key]) if key in fields else "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value != []:
            out += [flag, *map(str, value if isinstance(value, list) else [value])]
    return out


def _torchrun(script: list[str]) -> None:
    cmd = [
        sys.executable,
        *("-m", "torch.distributed.run", "--nproc-per-node", "2"),
        *("--master-port", str(_port())),
        *script,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-3000:]


def _pretrain_2(out: Path, preset: str, strategy: str, **settings) -> Path:
    flags = _flags({**RUN, "preset": preset, "output_dir": out, "strategy": strategy, **settings})
    _torchrun(["-m", "harness.cli", "pretrain", "--no-progress", *flags])
    return out


def _losses(out: Path) -> list[float]:
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in rows if "loss" in r]


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


@pytest.fixture(scope="module")
def pythia_fsdp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pythia-tiny's run under FSDP on two processes, made once for the tests that read it
    (they copy it before changing anything)."""
    return _pretrain_2(tmp_path_factory.mktemp("pythia") / "fsdp", "pythia-tiny", "fsdp")


@pytest.mark.parametrize("preset", ["bert-tiny", "pythia-tiny"])
def test_fsdp_trains_as_ddp(tmp_path, preset: str, request: pytest.FixtureRequest) -> None:
    if preset == "pythia-tiny":
        fsdp = request.getfixturevalue("pythia_fsdp")
    else:
        fsdp = _pretrain_2(tmp_path / "fsdp", preset, "fsdp")
    ddp = _pretrain_2(tmp_path / "ddp", preset, "ddp")
    assert_close(_losses(fsdp), _losses(ddp), rtol=1e-5, atol=1e-5)
    a, b = _weights(fsdp / "final"), _weights(ddp / "final")
    assert a.keys() == b.keys()  # one plain Hugging Face folder, tied weights saved once
    for name in a:
        assert_close(a[name], b[name], rtol=1e-5, atol=1e-5, msg=name)
    meta = read_metadata(fsdp / "final")
    assert (meta.strategy, meta.world_size) == ("fsdp", 2)
    shards = sorted(p.name for p in (fsdp / "checkpoints/step-0000002" / SHARDED).iterdir())
    assert shards == [".metadata", "__0_0.distcp", "__1_0.distcp"]  # each rank wrote its own


def test_global_negatives_under_fsdp_equal_one_process_on_the_whole_batch(tmp_path) -> None:
    """Two ranks of 2 sequences, each scoring its rows against both ranks' targets, against
    one process scoring all 4 sequences at once: the same losses, step after step."""
    batch = {"batch_size": 4, "micro_batch_size": 2, "steps": 3, "save_at_steps": []}
    two = _pretrain_2(
        tmp_path / "two", "pythia-tiny", "fsdp", **{"loss.negatives": "global"}, **batch
    )
    one = tmp_path / "one"
    cfg = {**RUN, **batch, "micro_batch_size": 4, "negatives": "local"}
    loss = {"negatives": cfg.pop("negatives")}
    pretrain(
        PretrainConfig(preset="pythia-tiny", output_dir=str(one), progress=False, loss=loss, **cfg)
    )
    assert_close(_losses(two), _losses(one), rtol=1e-5, atol=1e-6)
    assert read_metadata(two / "final").negatives == read_metadata(one / "final").negatives


def test_a_step_reads_the_same_samples_at_any_world_size() -> None:
    per_step, size = 8, 2
    for step in (0, 5):
        expected = set(range(step * per_step, (step + 1) * per_step))
        for world in (1, 2, 4):
            accum = per_step // (size * world)
            got = [
                first_sample(step, per_step, micro, rank, world, size) + i
                for micro in range(accum)
                for rank in range(world)
                for i in range(size)
            ]
            assert sorted(got) == sorted(expected) and len(got) == len(set(got))


def _saved_state(checkpoint: Path, tmp: Path) -> dict:
    dcp_to_torch_save(checkpoint / SHARDED, tmp / "saved.pt")
    return torch.load(tmp / "saved.pt", weights_only=False)


def _assert_state_equal(loaded: dict, saved: dict, weights: dict[str, torch.Tensor]) -> None:
    """Bit-equal: the loaded model equals the checkpoint's Hugging Face weights and its
    sharded model state; the loaded optimizer state equals the saved one, tensor by tensor."""
    for name, tensor in weights.items():
        assert torch.equal(loaded["model"][name], tensor), name
    for name, tensor in saved["model"].items():
        assert torch.equal(loaded["model"][name], tensor), name
    assert loaded["optimizer"]["state"].keys() == saved["optimizer"]["state"].keys()
    for name, slots in saved["optimizer"]["state"].items():
        for slot, value in slots.items():
            assert torch.equal(
                torch.as_tensor(loaded["optimizer"]["state"][name][slot]), torch.as_tensor(value)
            ), (name, slot)


LOAD_SCRIPT = """
import json, sys, torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict
from zoo.train.config import PretrainConfig
from zoo.train.distributed import init_distributed
from zoo.train.optim import optimizers_of
from zoo.train.setup import setup

cfg = PretrainConfig.model_validate(json.loads(sys.argv[1]))
ctx = init_distributed("cpu", cfg.strategy)
run = setup(cfg, True, ctx)
options = StateDictOptions(full_state_dict=True, cpu_offload=True)
model, optim = get_state_dict(run.model, optimizers_of(run.optimizer), options=options)
if ctx.is_main:
    torch.save({"model": model, "optimizer": optim, "world": ctx.world_size}, sys.argv[2])
dist.barrier()
"""


def _config(out: Path, **extra) -> PretrainConfig:
    return PretrainConfig(preset="pythia-tiny", output_dir=str(out), progress=False, **RUN, **extra)


def test_resume_two_processes_to_one(tmp_path, pythia_fsdp: Path) -> None:
    uninterrupted = pythia_fsdp
    out = tmp_path / "resumed"
    shutil.copytree(uninterrupted, out)
    shutil.rmtree(out / "final")
    checkpoint = out / "checkpoints/step-0000002"
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict

    from zoo.train.distributed import init_distributed
    from zoo.train.optim import optimizers_of
    from zoo.train.setup import setup

    run = setup(_config(out), True, init_distributed("cpu"))
    model, optim = get_state_dict(
        run.model, optimizers_of(run.optimizer), options=StateDictOptions(full_state_dict=True)
    )
    saved = _saved_state(checkpoint, tmp_path)
    _assert_state_equal({"model": model, "optimizer": optim}, saved, _weights(checkpoint))
    final = pretrain(_config(out), resume=True)  # steps 3-4 in one process
    a, b = _weights(final), _weights(uninterrupted / "final")
    for name in a:  # the same samples as the two processes read: the same model, to rounding
        assert_close(a[name], b[name], rtol=1e-5, atol=1e-5, msg=name)
    meta = read_metadata(final)
    assert meta.resumed[-1].changed == {"world_size": [2, 1], "strategy": ["fsdp", "single"]}
    assert meta.tokens_seen == 4 * 8 * 32


def test_resume_one_process_to_two(tmp_path) -> None:
    uninterrupted = pretrain(_config(tmp_path / "one"))
    out = tmp_path / "resumed"
    shutil.copytree(uninterrupted.parent, out)
    shutil.rmtree(out / "final")
    checkpoint = out / "checkpoints/step-0000002"
    settings = _config(out, strategy="fsdp").model_dump(mode="json")
    script = tmp_path / "load.py"
    script.write_text(LOAD_SCRIPT)
    _torchrun([str(script), json.dumps(settings), str(tmp_path / "loaded.pt")])
    loaded = torch.load(tmp_path / "loaded.pt", weights_only=False)
    assert loaded["world"] == 2
    _assert_state_equal(loaded, _saved_state(checkpoint, tmp_path), _weights(checkpoint))
    _pretrain_2(out, "pythia-tiny", "fsdp", resume=True)
    a, b = _weights(out / "final"), _weights(uninterrupted)
    for name in a:
        assert_close(a[name], b[name], rtol=1e-5, atol=1e-5, msg=name)
    assert read_metadata(out / "final").resumed[-1].changed["world_size"] == [1, 2]
