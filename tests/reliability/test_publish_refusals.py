"""What leaves this machine is checked first: a checkpoint whose weights lie about their
shape or are not finite, and rows that are not finite or say one measurement twice, are
refused by `hlm publish` (and such weights by `hlm evaluate`), naming the file."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from harness.publish.hub import refuse_unpublishable
from tests.harness.results.test_leaderboard import row
from tests.reliability.test_bad_input import assert_clean_error, hlm
from tests.tiny import TINY_RUN
from zoo.train.atomic import COMMIT
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain

WEIGHTS = "model.safetensors"


@pytest.fixture(scope="module")
def final(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("publish") / "r"
    cfg = PretrainConfig(preset="pythia-tiny", objective="ce", output_dir=str(out), steps=1)
    return pretrain(cfg.model_copy(update=TINY_RUN))


def _sent(final: Path, tmp_path: Path) -> Path:
    """A copy of the checkpoint as a sender would give it: no commit marker to check."""
    folder = tmp_path / "sent"
    shutil.copytree(final, folder)
    (folder / COMMIT).unlink()
    return folder


def _header_of(path: Path) -> tuple[int, dict]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return n, json.loads(raw[8 : 8 + n])


def _lying_header(folder: Path) -> None:
    path = folder / WEIGHTS
    raw = path.read_bytes()
    n, header = _header_of(path)
    name = next(k for k in header if k != "__metadata__")
    header[name]["data_offsets"][1] += 10**9  # a tensor past the end of the file
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n :])


def _huge_header_length(folder: Path) -> None:
    path = folder / WEIGHTS
    path.write_bytes(struct.pack("<Q", 2**62) + path.read_bytes()[8:])


def _linked_to_dev_zero(folder: Path) -> None:
    (folder / WEIGHTS).unlink()
    (folder / WEIGHTS).symlink_to("/dev/zero")


def _nan_weights(folder: Path) -> None:
    tensors = load_file(str(folder / WEIGHTS))
    name = next(iter(tensors))
    tensors[name] = torch.full_like(tensors[name], float("nan"))
    save_file(tensors, str(folder / WEIGHTS), metadata={"format": "pt"})


DAMAGE = {
    "a lying header": (_lying_header, "lies outside the file's data"),
    "a 2^62 header length": (_huge_header_length, "a header of 4611686018427387904 bytes"),
    "weights linked to /dev/zero": (_linked_to_dev_zero, "is not a regular file (a device)"),
    "NaN weights": (_nan_weights, "holds NaN or infinite values"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_publish_and_evaluate_refuse_weights_that_lie(final, tmp_path, damage) -> None:
    folder = _sent(final, tmp_path)
    harm, named = DAMAGE[damage]
    harm(folder)
    out = tmp_path / "staged"
    rc, err = hlm("publish", "model", str(folder), "--repo", "me/x", "--output-dir", str(out))
    assert_clean_error(rc, err, f"{folder / WEIGHTS}: ", named)
    assert not out.exists()
    rc, err = hlm("evaluate", str(folder), "--tasks", "hlm_lambada", "--limit", "2")
    assert_clean_error(rc, err, named)


def test_publish_refuses_a_config_of_another_architecture(final, tmp_path) -> None:
    folder = _sent(final, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
    out = tmp_path / "staged"
    rc, err = hlm("publish", "model", str(folder), "--repo", "me/x", "--output-dir", str(out))
    assert rc == 2 and "Traceback" not in err and not out.exists(), err


def test_rows_that_are_not_finite_or_said_twice_never_leave() -> None:
    import pandas as pd

    good = [row("m", "accuracy", 0.5, step=1), row("m", "accuracy", 0.6, step=2)]
    refuse_unpublishable(pd.DataFrame(good), "f.parquet")
    for value in (float("nan"), float("inf")):
        with pytest.raises(Exception, match=r"f.parquet: .*accuracy is (nan|inf): not a finite"):
            refuse_unpublishable(pd.DataFrame([row("m", "accuracy", value)]), "f.parquet")
    with pytest.raises(Exception, match=r"holds 2 rows for one measurement"):
        refuse_unpublishable(pd.DataFrame([good[0], good[0]]), "f.parquet")
