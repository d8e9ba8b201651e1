"""Rank and world-size handling, in one place.

Single process by default; under `torchrun` (WORLD_SIZE > 1) a gloo (CPU) or nccl (CUDA) process
group is created and the train module is wrapped in DistributedDataParallel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistContext:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

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

        return DistributedDataParallel(module)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def all_reduce_mean(self, value: float) -> float:
        if not self.enabled:
            return value
        t = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(t)
        return float(t.item()) / self.world_size


def init_distributed() -> DistContext:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistContext()
    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return DistContext(
        rank=dist.get_rank(),
        world_size=dist.get_world_size(),
        local_rank=int(os.environ.get("LOCAL_RANK", "0")),
    )


def shutdown_distributed(ctx: DistContext) -> None:
    if ctx.enabled and dist.is_initialized():
        dist.destroy_process_group()
