"""Experiment trackers: every metrics line of a run also goes to TensorBoard or Weights & Biases.

    hlm pretrain ... --report-to tensorboard        # OUTPUT_DIR/tensorboard/, torch's writer
    WANDB_MODE=offline hlm pretrain ... --report-to wandb

`metrics.jsonl` is always written; a tracker only mirrors it, from the main process. A tracker
is a factory registered in `TRACKERS` by name (`report_to` is checked against it); its
package is imported when the run starts, with a clear error naming the install when it is
missing. W&B reads its own environment (`WANDB_PROJECT`, default `headless-zoo`;
`WANDB_MODE=offline` for no network).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from zoo.errors import UserError
from zoo.registry import Registry


class Tracker(Protocol):
    def log(self, step: int, values: dict[str, float]) -> None: ...

    def close(self) -> None: ...


TrackerFactory = Callable[[Path, dict[str, Any]], Tracker]
TRACKERS: Registry[TrackerFactory] = Registry("tracker")


def _require(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"report_to: the {package} tracker needs `pip install {package}` "
            "(or `pip install 'headless-zoo[trackers]'`)"
        ) from None


def flat_hparams(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A run config as TensorBoard hyper-parameters: nested keys joined with dots
    (`loss.temperature`), each value a number, a bool or a string (lists and None as text)."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(flat_hparams(value, f"{prefix}{key}."))
        elif isinstance(value, bool | int | float | str):
            flat[prefix + key] = value
        else:
            flat[prefix + key] = str(value)
    return flat


class TensorBoardTracker:
    """Scalars under OUTPUT_DIR/tensorboard/, grouped `train/`, `val/` by their key; the run
    config as the run's hyper-parameters (every field, loss options included: the HParams
    tab), and as text."""

    def __init__(self, out: Path, config: dict[str, Any]) -> None:
        _require("tensorboard", "tensorboard")
        from torch.utils.tensorboard import SummaryWriter
        from torch.utils.tensorboard.summary import hparams

        self.writer = SummaryWriter(log_dir=str(out / "tensorboard"))
        self.writer.add_text("config", f"```\n{config}\n```", 0)
        summaries = hparams(flat_hparams(config), {"val/val_loss": float("nan")})
        for summary in summaries:
            self.writer._get_file_writer().add_summary(summary)

    def log(self, step: int, values: dict[str, float]) -> None:
        for key, value in values.items():
            group = "val" if key.startswith("val_") else "train"
            self.writer.add_scalar(f"{group}/{key}", value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class WandbTracker:
    """A W&B run named after the output folder, its config the run's resolved config."""

    def __init__(self, out: Path, config: dict[str, Any]) -> None:
        wandb = _require("wandb", "wandb")
        project = os.environ["WANDB_PROJECT"] if "WANDB_PROJECT" in os.environ else "headless-zoo"
        try:
            self.run = wandb.init(project=project, name=out.name, dir=str(out), config=config)
        except (wandb.errors.UsageError, wandb.errors.CommError) as exc:
            raise UserError(
                f"--report-to wandb: {str(exc).strip().splitlines()[0]} (log in with `wandb "
                "login` or WANDB_API_KEY, or log locally with WANDB_MODE=offline); nothing was "
                f"trained: continue in {out} with --overwrite"
            ) from None

    def log(self, step: int, values: dict[str, float]) -> None:
        self.run.log(values, step=step)

    def close(self) -> None:
        self.run.finish()


TRACKERS.add("tensorboard", TensorBoardTracker)
TRACKERS.add("wandb", WandbTracker)


def open_trackers(names: list[str], out: Path, config: dict[str, Any]) -> list[Tracker]:
    return [TRACKERS.get(name)(out, config) for name in names]
