"""Where a suite's jobs run on a Slurm cluster: typed launcher settings, read once, checked once.

Settings come from three places, each over the one before: a suite's `launcher:` section, a
separate file (`hlm run --launcher FILE`, the same keys), and `hlm run`'s flags (one per
field, made from this model: `--partition`, `--time-min`, `--gpus-per-node`, ...). None of
them is part of any cell's key: the same cells run the same wherever they are sent.

    launcher:
      partition: gpu
      account: my-lab
      time_min: 720
      gpus_per_node: 1
      cpus_per_task: 16
      sbatch: ["--constraint=h100"]       # extra sbatch options, as on its command line
      setup: ["module load cuda/12.4"]    # shell lines run before the job's command

`submitit_parameters` turns them into the parameters `submitit`'s Slurm executor takes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from zoo.errors import UserError, format_validation_error
from zoo.settings import Settings
from zoo.yaml_files import read_yaml_mapping

MAX_MINUTES = 60 * 24 * 30  # the longest job a cluster's sbatch accepts at most: 30 days


class Launcher(Settings):
    """A job's Slurm resources; what a field leaves unset the cluster's defaults decide."""

    partition: str | None = Field(None, description="Slurm partition (sbatch --partition)")
    account: str | None = Field(None, description="Slurm account charged (sbatch --account)")
    qos: str | None = Field(None, description="Slurm quality of service (sbatch --qos)")
    time_min: int = Field(
        240, ge=1, le=MAX_MINUTES, description="wall-clock limit of each job, in minutes"
    )
    nodes: int = Field(
        1, ge=1, le=64, description="nodes of a pretraining job (torchrun across them)"
    )
    gpus_per_node: int = Field(
        0, ge=0, le=16, description="GPUs per node; above 1, pretraining runs under torchrun"
    )
    cpus_per_task: int = Field(8, ge=1, le=512, description="CPU cores of each job")
    mem_gb: int | None = Field(None, ge=1, le=8192, description="memory of each job, in GB")
    array_parallelism: int = Field(
        64, ge=1, le=10_000, description="array tasks (cells without pretraining) run at once"
    )
    sbatch: list[str] = Field(
        default_factory=list,
        description="extra sbatch options, each as on its command line (--constraint=h100)",
    )
    setup: list[str] = Field(
        default_factory=list, description="shell lines run before each job's command"
    )

    @field_validator("sbatch")
    @classmethod
    def _an_option(cls, lines: list[str]) -> list[str]:
        for line in lines:
            name = line.split("=", 1)[0]
            if not name.startswith("--") or len(name) < 3 or any(c.isspace() for c in name):
                raise ValueError(f"{line!r}: an sbatch option reads --name or --name=value")
        return lines

    @field_validator("setup", "sbatch")
    @classmethod
    def _one_line(cls, lines: list[str]) -> list[str]:
        for line in lines:
            if "\n" in line or "\r" in line or not line.strip():
                raise ValueError(f"{line!r}: one non-empty line each")
        return lines

    def submitit_parameters(self) -> dict[str, Any]:
        """The parameters of `submitit.SlurmExecutor.update_parameters` (one task per node:
        torchrun starts the processes of a multi-GPU pretraining itself)."""
        extra = dict(_option(line) for line in self.sbatch)
        params: dict[str, Any] = {
            "time": self.time_min,
            "nodes": self.nodes,
            "ntasks_per_node": 1,
            "cpus_per_task": self.cpus_per_task,
            "array_parallelism": self.array_parallelism,
            "setup": list(self.setup),
            "additional_parameters": extra,
        }
        if self.gpus_per_node:
            params["gpus_per_node"] = self.gpus_per_node
        if self.mem_gb is not None:
            params["mem"] = f"{self.mem_gb}GB"
        for name in ("partition", "account", "qos"):
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        return params


def _option(line: str) -> tuple[str, Any]:
    """An sbatch option line as submitit's `additional_parameters` takes it (dashes become
    underscores; a bare flag is True)."""
    name, _, value = line.partition("=")
    return name.removeprefix("--").replace("-", "_"), value if value else True


def launcher_from(in_suite: Launcher | None, path: str | None, flags: dict[str, Any]) -> Launcher:
    """The settings of a submission: the suite's `launcher:` section, then the file at
    `path`, then the flags set (None: unset), each key over the one before; checked once."""
    merged: dict[str, Any] = {} if in_suite is None else in_suite.model_dump(exclude_unset=True)
    where = "hlm run's launcher flags"
    if path is not None:
        merged.update(read_yaml_mapping(Path(path), "launcher settings"))
        where = path
    merged.update({k: v for k, v in flags.items() if v is not None})
    try:
        return Launcher.model_validate(merged)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, where, Launcher)) from None
