"""Rank and world-size handling, in one place.

Single process by default; under `torchrun` (WORLD_SIZE > 1) a gloo (CPU training) or nccl
(CUDA training, one GPU per local rank) process group is created, and the train module is
either wrapped in DistributedDataParallel (strategy ``ddp``) or sharded with FSDP2's
`fully_shard` (strategy ``fsdp``: each block a unit, the train module the root, so that its
forward gathers the embeddings the contrastive loss reads).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistContext:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    strategy: Literal["ddp", "fsdp"] = "ddp"  # a single process trains the plain model

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def layout(self) -> Literal["single", "ddp", "fsdp"]:
        """How the processes hold the model: single (one process), ddp or fsdp."""
        return self.strategy if self.enabled else "single"

    @property
    def sharded(self) -> bool:
        """Whether parameters are FSDP-sharded DTensors."""
        return self.layout == "fsdp"

    def shard(self, root: nn.Module, units: list[nn.Module]) -> None:
        """FSDP2 in place (strategy fsdp only): each of `units`, then `root`, over one
        device mesh of every rank. Before the optimizer is made: it must see the shards."""
        if not self.sharded:
            return
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh(self.device.type, (self.world_size,))
        for unit in units:
            fully_shard(unit, mesh=mesh)
        fully_shard(root, mesh=mesh)

    def wrap(self, module: nn.Module) -> nn.Module:
        """The module under DistributedDataParallel (strategy ddp, several processes)."""
        if self.layout != "ddp":
            return module
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(module, device_ids=ids)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def all_true(self, value: bool) -> bool:
        """Whether `value` holds on every rank."""
        if not self.enabled:
            return value
        t = torch.tensor([int(value)], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MIN)
        return bool(t.item())

    def agree(self, value: str) -> str:
        """Rank 0's `value`, on every rank."""
        if not self.enabled:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return str(box[0])

    def mean_over_ranks(self, value: torch.Tensor) -> torch.Tensor:
        """Every rank's mean of a tensor on this rank's device, without reading it back."""
        if not self.enabled:
            return value
        total = value.detach().clone()
        dist.all_reduce(total)
        return total / self.world_size

    def all_reduce_mean(self, value: float) -> float:
        if not self.enabled:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return float(t.item()) / self.world_size


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` where a GPU is visible, else ``cpu``; ``cuda`` without one is an
    error."""
    from zoo.errors import UserError

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("device: 'cuda' asked for, but torch sees no CUDA device here")
    if device not in ("cpu", "cuda"):
        raise UserError(f"device: unknown {device!r}; choose auto, cpu or cuda")
    return device


def init_distributed(device: str = "cpu", strategy: Literal["ddp", "fsdp"] = "ddp") -> DistContext:
    """`device`: ``cpu`` or ``cuda`` (see `resolve_device`); under torchrun each rank takes
    the GPU of its local rank."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    dev = torch.device("cuda", local_rank if world > 1 else 0) if device == "cuda" else None
    if world <= 1:
        return DistContext(device=dev or torch.device("cpu"), strategy=strategy)
    if dev is not None:
        torch.cuda.set_device(dev)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if dev is not None else "gloo")
    return DistContext(
        rank=dist.get_rank(),
        world_size=dist.get_world_size(),
        local_rank=local_rank,
        device=dev or torch.device("cpu"),
        strategy=strategy,
    )


def shutdown_distributed(ctx: DistContext) -> None:
    if ctx.enabled and dist.is_initialized():
        dist.destroy_process_group()
