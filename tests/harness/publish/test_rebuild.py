"""A published card rebuilds its run: `hlm pretrain --config` on the card's configuration, in
the published repository alone, gives the same weights bit for bit (a plugin objective, an
intermediate checkpoint, a causally fine-tuned decoder from its published parent)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

from harness.publish.cards import CardOptions
from harness.publish.hub import publish_model

ROOT = Path(__file__).resolve().parents[3]
TINY = ["--steps", "4", "--vocab-size", "500", "--batch-size", "4", "--seq-len", "32",
        "--corpus", "synthetic:200", "--no-progress"]  # fmt: skip


def _hlm(*argv: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _card_config(repo: Path) -> Path:
    """The card's training configuration, saved as the card tells a reader to."""
    card = (repo / "README.md").read_text()
    (block,) = re.findall(r"## Training configuration\n.*?```yaml\n(.*?)```", card, re.S)
    (repo / "config.yaml").write_text(block)
    return repo / "config.yaml"


def _same_weights(a: Path, b: Path) -> None:
    wa, wb = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    assert wa.keys() == wb.keys()
    assert all(torch.equal(wa[k], wb[k]) for k in wa), [
        k for k in wa if not torch.equal(wa[k], wb[k])
    ]


def test_a_plugin_run_and_a_step_checkpoint_rebuild_from_their_cards(tmp_path: Path) -> None:
    plugin = tmp_path / "mine" / "cosine_cwt.py"
    plugin.parent.mkdir()
    shutil.copy(ROOT / "examples" / "cosine_cwt.py", plugin)
    run = tmp_path / "run"
    _hlm("pretrain", "--preset", "bert-tiny", "--objective", "cosine-cwt", "--plugins",
         str(plugin), "--loss.margin", "0.2", "--save-at-steps", "2", *TINY,
         "--output-dir", str(run))  # fmt: skip
    for ckpt, name in ((run / "final", "final"), (run / "checkpoints" / "step-0000002", "step")):
        repo = Path(publish_model(ckpt, f"me/{name}", dry_run=tmp_path / f"repo-{name}"))
        assert (repo / "plugins" / "cosine_cwt.py").read_bytes() == plugin.read_bytes()
        card = (repo / "README.md").read_text()
        assert ("intermediate checkpoint" in card) == (name == "step")
        config = _card_config(repo)
        plugin.unlink() if name == "step" else None  # the repository alone: not the user's file
        again = tmp_path / f"again-{name}"
        _hlm("pretrain", "--config", str(config), "--trust-plugins", "--output-dir", str(again))
        rebuilt = again / "final" if name == "final" else again / "checkpoints" / "step-0000002"
        _same_weights(ckpt, rebuilt)


def test_a_finetuned_decoder_rebuilds_from_its_card_and_its_published_parent(
    tmp_path: Path,
) -> None:
    """Trained as the rebuild runs (a process of one thread: thread counts change float
    sums), from the command line."""
    _hlm("pretrain", "--preset", "pythia-tiny", "--objective", "cwt", *TINY,
         "--output-dir", str(tmp_path / "p"))  # fmt: skip
    parent = tmp_path / "p" / "final"
    _hlm("finetune-causal", str(parent), str(tmp_path / "ft"), "--steps", "2",
         "--warmup-steps", "1", "--no-progress")  # fmt: skip
    tuned = tmp_path / "ft" / "final"
    parent_repo = Path(publish_model(parent, "me/parent", dry_run=tmp_path / "repo-parent"))
    repo = Path(
        publish_model(
            tuned,
            "me/tuned",
            dry_run=tmp_path / "repo-tuned",
            card=CardOptions(base_model="me/parent"),
        )
    )
    config = _card_config(repo)
    assert "init_from: me/parent" in config.read_text()
    assert str(tmp_path) not in config.read_text()  # no local path of this machine
    cache = tmp_path / "hub"  # the parent as `hf download me/parent` leaves it
    snapshot = cache / "models--me--parent" / "snapshots" / ("0" * 40)
    shutil.copytree(parent_repo, snapshot)
    (cache / "models--me--parent" / "refs").mkdir()
    (cache / "models--me--parent" / "refs" / "main").write_text("0" * 40)
    offline = {"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    again = tmp_path / "again"
    _hlm("pretrain", "--config", str(config), "--output-dir", str(again), env=offline)
    _same_weights(tuned, again / "final")
