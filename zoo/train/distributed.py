"""Rank and world-size handling, in one place.

Single process by default; under `torchrun` (WORLD_SIZE > 1) a gloo (CPU training) or nccl
(CUDA training, one GPU per local rank) process group is created and the train module is
wrapped in DistributedDataParallel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistContext:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    def wrap(self, module: nn.Module) -> nn.Module:
        if not self.enabled:
            return module
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(module, device_ids=ids)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def all_reduce_mean(self, value: float) -> float:
        if not self.enabled:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return float(t.item()) / self.world_size


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` where a GPU is visible, else ``cpu``; ``cuda`` without one is an error."""
    from zoo.errors import UserError

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("device: 'cuda' asked for, but torch sees no CUDA device here")
    if device not in ("cpu", "cuda"):
        raise UserError(f"device: unknown {device!r}; choose auto, cpu or cuda")
    return device


def init_distributed(device: str = "cpu") -> DistContext:
    """`device`: ``cpu`` or ``cuda`` (see `resolve_device`); under torchrun each rank takes
    the GPU of its local rank."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local_rank if world > 1 else 0) if device == "cuda" else None
    if world <= 1:
        return DistContext(device=dev or torch.device("cpu"))
    if dev is not None:
        torch.cuda.set_device(dev)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if dev is not None else "gloo")
    return DistContext(
        rank=dist.get_rank(),
        world_size=dist.get_world_size(),
        local_rank=local_rank,
        device=dev or torch.device("cpu"),
    )


def shutdown_distributed(ctx: DistContext) -> None:
    if ctx.enabled and dist.is_initialized():
        dist.destroy_process_group()
