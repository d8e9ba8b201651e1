"""Pretraining end to end on the CPU: checkpoints, resume, faults, fine-tuning, CLI, DDP."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from torch.testing import assert_close

from harness.cli import main as hlm
from tests.tiny import TINY_RUN
from zoo.errors import TrainingDiverged, UserError
from zoo.registry import load_plugin
from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain

TINY = dict(steps=12, **TINY_RUN)


def metrics(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]


def test_resume_equals_uninterrupted_run(tmp_path) -> None:
    full = PretrainConfig(
        preset="bert-tiny", objective="cwt", output_dir=str(tmp_path / "a"), save_every=5, **TINY
    )
    pretrain(full)
    part = full.model_copy(update={"output_dir": str(tmp_path / "b"), "steps": 7})
    # a run that stopped after step 7 with a checkpoint at step 5, then resumed to 12
    pretrain(part)
    cont = full.model_copy(update={"output_dir": str(tmp_path / "b")})
    pretrain(cont, resume=True)
    la = [m["loss"] for m in metrics(tmp_path / "a") if "loss" in m]
    lb = [m["loss"] for m in metrics(tmp_path / "b") if "loss" in m]
    assert len(la) == len(lb) == 12
    assert_close(torch.tensor(lb), torch.tensor(la), rtol=1e-5, atol=1e-6)
    wa = load_file(str(tmp_path / "a/final/model.safetensors"))
    wb = load_file(str(tmp_path / "b/final/model.safetensors"))
    for k in wa:
        assert_close(wb[k], wa[k], rtol=1e-5, atol=1e-6)


def test_resume_without_checkpoint_is_user_error(tmp_path) -> None:
    cfg = PretrainConfig(preset="bert-tiny", output_dir=str(tmp_path / "none"), **TINY)
    with pytest.raises(UserError, match="no checkpoint"):
        pretrain(cfg, resume=True)


def test_nan_loss_stops_with_clear_error_and_keeps_checkpoint(tmp_path) -> None:
    plugin = tmp_path / "nan_obj.py"
    plugin.write_text(
        "import torch\n"
        "from zoo.objectives import OBJECTIVES, ContrastiveOptions, Objective, contrastive_flops\n"
        "from zoo.objectives.builtin import cwt_objective\n"
        "def loss(batch, options):\n"
        "    out = cwt_objective(batch, options)\n"
        "    if torch.is_grad_enabled() and loss.calls >= 6:\n"
        "        out['loss'] = out['loss'] * float('nan')\n"
        "    loss.calls += 1\n"
        "    return out\n"
        "loss.calls = 0\n"
        "OBJECTIVES.add('test-nan-after-6', Objective('test-nan-after-6', loss, needs_head=False, "
        "flops=contrastive_flops, options=ContrastiveOptions))\n"
    )
    load_plugin(plugin, trusted=True)  # as the user's --plugins: a config names code it imported
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="test-nan-after-6",
        output_dir=str(tmp_path / "r"),
        plugins=[str(plugin)],
        save_every=3,
        **TINY,
    )
    # steps 7-9 are skipped (no update), the fourth in a row stops the run
    with pytest.raises(TrainingDiverged, match=r"^step 10: loss nan, 4 steps in a row"):
        pretrain(cfg)
    ckpts = sorted(p.name for p in (tmp_path / "r/checkpoints").iterdir())
    assert ckpts == ["step-0000003", "step-0000006", "step-0000009"]
    assert not any(p.name.startswith(".tmp") for p in (tmp_path / "r/checkpoints").iterdir())


def test_corpus_too_small_for_a_batch(tmp_path) -> None:
    cfg = PretrainConfig(
        preset="pythia-tiny",
        output_dir=str(tmp_path / "r"),
        **{**TINY, "corpus": ["synthetic:8"], "batch_size": 64, "validation_fraction": 0.2},
    )
    with pytest.raises(UserError, match="corpus too small"):
        pretrain(cfg)


LOAD_SCRIPT = """
import sys, json, torch
from transformers import AutoModelForMaskedLM, AutoModelForCausalLM, AutoTokenizer, AutoModel
for path, kind in zip(sys.argv[1::2], sys.argv[2::2]):
    tok = AutoTokenizer.from_pretrained(path)
    ids = tok("ka bamo dusis lo fetari.", return_tensors="pt")["input_ids"]
    body, info = AutoModel.from_pretrained(path, output_loading_info=True)
    seen = {"path": path, "zoo_imported": "zoo" in sys.modules, "gaps": {k: sorted(v)
            for k, v in info.items() if v}, "architectures": body.config.architectures}
    with torch.no_grad():
        seen["body"] = list(body.eval()(input_ids=ids).last_hidden_state.shape)
        if kind != "body":
            cls = AutoModelForMaskedLM if kind == "mlm" else AutoModelForCausalLM
            m = cls.from_pretrained(path).eval()
            seen["shape"] = list(m(input_ids=ids).logits.shape)
            out = m.get_output_embeddings().weight.data_ptr()
            seen["tied"] = out == m.get_input_embeddings().weight.data_ptr()
    print(json.dumps(seen))
"""
# (preset, objective, how plain transformers loads it, its declared architecture)
PLAIN = [
    ("bert-tiny", "cwt", "body", "BertModel"),  # a headless encoder: its body alone
    ("bert-tiny", "ce", "mlm", "BertForMaskedLM"),
    ("pythia-tiny", "cwt", "causal", "GPTNeoXForCausalLM"),  # its head: the input embeddings
    ("pythia-tiny", "ce", "causal", "GPTNeoXForCausalLM"),
]


@pytest.fixture(scope="module")
def loaded_plainly(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict]:
    """Each of `PLAIN` pretrained, then loaded by plain transformers in one fresh interpreter
    that never imports the project: (preset, objective) -> what the loader saw, and where."""
    root = tmp_path_factory.mktemp("plain")
    argv = []
    for preset, objective, kind, _ in PLAIN:
        cfg = PretrainConfig(
            preset=preset, objective=objective, output_dir=str(root / objective / preset), **TINY
        )
        argv += [str(pretrain(cfg)), kind]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, *argv],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        check=True,
    )
    seen = [json.loads(line) for line in out.stdout.strip().splitlines() if line.startswith("{")]
    return dict(zip([(p, o) for p, o, _, _ in PLAIN], seen, strict=True))


@pytest.mark.parametrize(("preset", "objective", "kind", "architecture"), PLAIN)
def test_checkpoint_loads_with_plain_transformers(
    loaded_plainly: dict[tuple[str, str], dict],
    preset: str,
    objective: str,
    kind: str,
    architecture: str,
) -> None:
    res = loaded_plainly[preset, objective]
    final = Path(res["path"])
    meta = json.loads((final / "hlm_metadata.json").read_text())
    for key in (
        "objective",
        "preset",
        "steps",
        "tokens_seen",
        "train_flops",
        "wall_seconds",
        "seed",
        "versions",
    ):
        assert key in meta
    assert meta["steps"] == 12 and meta["tokens_seen"] == 12 * 4 * 32 and meta["train_flops"] > 0
    assert res["zoo_imported"] is False
    assert res["architectures"] == [architecture] and res["body"][-1] == 128
    if kind == "body":  # the README's one-liner: nothing missing, nothing unexpected
        assert res["gaps"] == {} and "shape" not in res
    else:
        assert res["tied"] is True  # a headless decoder's head is its input embeddings
        assert res["shape"][-1] == 400
    if kind == "mlm":  # Hugging Face's BertForMaskedLM builds no pooler: AutoModel adds one
        assert res["gaps"]["missing_keys"] == ["pooler.dense.bias", "pooler.dense.weight"]


def test_headless_decoder_tied_head_scores_are_cwt_scores(tmp_path) -> None:
    from transformers import AutoModelForCausalLM

    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / "r"), **TINY
        )
    )
    m = AutoModelForCausalLM.from_pretrained(final).eval()
    ids = torch.randint(0, 400, (1, 10))
    with torch.no_grad():
        h = m.gpt_neox(input_ids=ids).last_hidden_state
        assert_close(
            m(input_ids=ids).logits, h @ m.get_input_embeddings().weight.T, rtol=1e-4, atol=1e-4
        )


def test_finetune_causal_unties_head_and_lowers_ce(tmp_path) -> None:
    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny",
            objective="cwt",
            output_dir=str(tmp_path / "h"),
            **{**TINY, "steps": 30},
        )
    )
    before = read_metadata(final)
    settings = CausalFinetuneConfig(steps=30, warmup_steps=3, batch_size=4, progress=False)
    ft = finetune_causal(str(final), str(tmp_path / "ft"), settings)
    meta = read_metadata(ft)
    # the pretraining objective is kept; the fine-tuning is recorded beside it
    assert meta.objective == "cwt" and meta.headless
    assert meta.causal_finetune is not None and meta.causal_finetune.steps == 30
    assert meta.causal_finetune.tokens == meta.tokens_seen - before.tokens_seen == 30 * 4 * 32
    assert meta.validation["val_ce"] < before.validation["val_ce"]
    from transformers import AutoModelForCausalLM

    m = AutoModelForCausalLM.from_pretrained(ft)
    assert m.get_output_embeddings().weight.data_ptr() != m.get_input_embeddings().weight.data_ptr()
    # the head it trained is the one saved (once a copy of the input embeddings was written
    # over it), so the checkpoint scores as the run's own validation did
    head, emb = m.get_output_embeddings().weight, m.get_input_embeddings().weight
    assert not torch.allclose(head, emb)
    probe = finetune_causal(
        str(final),
        str(tmp_path / "probe"),
        CausalFinetuneConfig(steps=3, warmup_steps=1, probe=True, progress=False),
    )
    pb = load_file(str(probe / "model.safetensors"))
    base = load_file(str(final / "model.safetensors"))
    assert_close(
        pb["gpt_neox.layers.0.mlp.dense_h_to_4h.weight"],
        base["gpt_neox.layers.0.mlp.dense_h_to_4h.weight"],
    )
    assert_close(pb["gpt_neox.embed_in.weight"], base["gpt_neox.embed_in.weight"])
    probed = AutoModelForCausalLM.from_pretrained(probe)  # its head trained, not the embeddings'
    assert not torch.allclose(
        probed.get_output_embeddings().weight, base["gpt_neox.embed_in.weight"]
    )


def test_finetune_causal_rejects_encoders(tmp_path) -> None:
    final = pretrain(
        PretrainConfig(preset="bert-tiny", objective="cwt", output_dir=str(tmp_path / "e"), **TINY)
    )
    with pytest.raises(UserError, match="applies to decoders"):
        finetune_causal(str(final), str(tmp_path / "x"), CausalFinetuneConfig(steps=2))


def test_finetune_causal_refuses_a_decoder_whose_objective_trained_its_head(tmp_path) -> None:
    """A vanilla decoder's head is trained (and Pythia's is its own matrix): a head from the
    embeddings would replace it in silence. Refused before anything is written, as a suite
    refuses finetune_causal on a headed objective."""
    final = pretrain(
        PretrainConfig(preset="pythia-tiny", objective="ce", output_dir=str(tmp_path / "v"), **TINY)
    )
    with pytest.raises(
        UserError,
        match=r"pretrained with ce, which trains its LM head; .* "
        rf"pretrain with --init-from {final}$",
    ):
        finetune_causal(str(final), str(tmp_path / "x"), CausalFinetuneConfig(steps=2))
    assert not (tmp_path / "x").exists()


def test_finetune_causal_of_nce_starts_from_the_target_matrix_its_loss_trained(tmp_path) -> None:
    """NCE's targets are a separate matrix, the model's LM head: the causal fine-tuning's head
    starts from it, as CWT's starts from the input embeddings its loss scored against."""
    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny", objective="nce", output_dir=str(tmp_path / "n"), **TINY
        )
    )
    settings = CausalFinetuneConfig(steps=1, lr=1e-12, progress=False)
    ft = finetune_causal(str(final), str(tmp_path / "ft"), settings)
    before, after = (
        load_file(str(final / "model.safetensors")),
        load_file(str(ft / "model.safetensors")),
    )
    assert_close(after["embed_out.weight"], before["embed_out.weight"])
    assert not torch.allclose(before["embed_out.weight"], before["gpt_neox.embed_in.weight"])


def test_cli_user_errors_exit_2_without_traceback(tmp_path, capsys) -> None:
    assert (
        hlm(
            [
                "pretrain",
                "--preset",
                "bert-tiny",
                "--objective",
                "cwtt",
                "--output-dir",
                str(tmp_path),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "unknown objective 'cwtt'; did you mean 'cwt'" in err and "Traceback" not in err
    cfg = tmp_path / "c.yaml"
    cfg.write_text("preset: bert-tiny\noutput_dir: x\nstepz: 3\n")
    assert hlm(["pretrain", "--config", str(cfg)]) == 2
    assert f"{cfg}: stepz: unknown key; did you mean 'steps'" in capsys.readouterr().err
    assert hlm(["pretrain", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert f"{tmp_path / 'missing.yaml'}: file not found" in capsys.readouterr().err


def test_cli_pretrain_from_yaml(tmp_path, capsys) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"preset: pythia-tiny\nobjective: cwt\noutput_dir: {tmp_path / 'run'}\n"
        "steps: 3\nbatch_size: 2\nseq_len: 32\nvocab_size: 400\ncorpus: [synthetic:100]\n"
    )
    assert hlm(["pretrain", "--config", str(cfg), "--no-progress", "--steps", "4"]) == 0
    assert json.loads((tmp_path / "run/final/hlm_metadata.json").read_text())["steps"] == 4


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["bert-tiny", "pythia-tiny"])
@pytest.mark.parametrize("objective", ["ce", "cwt"])
def test_validation_loss_falls_on_real_corpus(
    tmp_path, data_root, preset: str, objective: str
) -> None:
    cfg = PretrainConfig(
        preset=preset,
        objective=objective,
        output_dir=str(tmp_path / "r"),
        corpus=["corpus/wikitext-2/valid.txt"],
        vocab_size=2000,
        steps=80,
        batch_size=16,
        seq_len=64,
        eval_every=40,
        eval_batches=4,
        progress=False,
    )
    pretrain(cfg)
    vals = [m["val_loss"] for m in metrics(tmp_path / "r") if "val_loss" in m]
    assert len(vals) == 3
    # the eval batches are fixed (same blocks, same masking seed): any drop is signal, not noise
    assert vals[-1] < vals[0] - (0.3 if objective == "ce" else 0.05), vals


@pytest.mark.slow
@pytest.mark.parametrize(
    ("preset", "negatives", "port"),
    [("pythia-tiny", "local", 29533), ("bert-tiny", "global", 29534)],  # MLM: K differs by rank
)
def test_torchrun_ddp_two_processes(tmp_path, preset: str, negatives: str, port: int) -> None:
    out = tmp_path / "ddp"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        str(port),
        "-m",
        "harness.cli",
        "pretrain",
        "--preset",
        preset,
        "--objective",
        "cwt",
        "--loss.negatives",
        negatives,
        "--output-dir",
        str(out),
        "--steps",
        "6",
        "--batch-size",
        "8",
        "--micro-batch-size",
        "2",
        "--seq-len",
        "32",
        "--vocab-size",
        "400",
        "--corpus",
        "synthetic:200",
        "--no-progress",
        "--log-every",
        "1",
    ]
    res = subprocess.run(
        cmd, capture_output=True, text=True, cwd=Path(__file__).parents[3], timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    meta = read_metadata(out / "final")
    # the global batch = micro-batch x accumulation x world size
    r = meta.recipe
    assert (meta.batch_size, r.micro_batch_size, r.grad_accum, meta.world_size) == (8, 2, 2, 2)
    assert meta.tokens_seen == 6 * 8 * 32
    if negatives == "global":  # K over both ranks' forward passes
        assert meta.negatives == 2 * round(2 * 30 * 0.15)
    losses = [r["loss"] for r in metrics(out) if "loss" in r]
    assert len(losses) == 6 and all(math.isfinite(x) for x in losses)


def test_pretrain_restores_the_denormal_mode(tmp_path) -> None:
    from zoo.numerics import denormals_flushed

    assert not denormals_flushed()
    pretrain(
        PretrainConfig(
            preset="pythia-tiny",
            objective="cwt",
            output_dir=str(tmp_path / "r"),
            **{**TINY, "steps": 2},
        )
    )
    assert not denormals_flushed()  # flushed during training only (flush_denormal=True by default)


def test_zero_steps_save_the_initial_weights_as_an_untrained_control(tmp_path) -> None:
    """`steps: 0` writes the seed's initial weights as `final/` (validated, loadable): the
    untrained twin a suite fine-tunes beside the pretrained models."""
    cfg = PretrainConfig(preset="bert-tiny", objective="ce", output_dir="", **{**TINY, "steps": 0})
    runs = [
        pretrain(cfg.model_copy(update={"output_dir": str(tmp_path / name), "seed": seed}))
        for name, seed in (("a", 0), ("b", 0), ("c", 1))
    ]
    meta = read_metadata(runs[0])
    assert meta.pretrain_step == 0 and meta.tokens_seen == 0
    assert math.isfinite(meta.validation["val_loss"])
    wa, wb, wc = (load_file(str(r / "model.safetensors")) for r in runs)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)  # the seed's initialisation, exactly
    assert not all(torch.equal(wa[k], wc[k]) for k in wa)
    trained = pretrain(cfg.model_copy(update={"output_dir": str(tmp_path / "t"), "steps": 2}))
    wt = load_file(str(trained / "model.safetensors"))
    assert not torch.equal(
        wa["bert.encoder.layer.0.attention.self.query.weight"],
        wt["bert.encoder.layer.0.attention.self.query.weight"],
    )


def test_a_resume_on_training_text_edited_since_is_refused(tmp_path) -> None:
    """The run's key names its corpus files, not their contents: going on from a checkpoint
    after the text changed would train one run on two texts. Restored, it resumes."""
    from tests.zoo.data.test_cache import _write_docs
    from zoo.data.synthetic import synthetic_corpus

    docs = synthetic_corpus(300)
    corpus = _write_docs(tmp_path / "text.txt", docs)
    run = {**TINY, "corpus": [str(corpus)], "steps": 4}
    cfg = PretrainConfig(preset="pythia-tiny", output_dir=str(tmp_path / "r"), save_every=2, **run)
    final = pretrain(cfg)
    assert read_metadata(final).corpus_contents is not None
    _write_docs(corpus, [*docs[:-1], "a sentence that was not there"])
    longer = cfg.model_copy(update={"steps": 6})
    with pytest.raises(UserError, match=r"the training text \(.*text.txt\) has changed since") as e:
        pretrain(longer, resume=True)
    assert f"move the run folder {tmp_path / 'r'} away" in str(e.value)  # not its checkpoints/
    _write_docs(corpus, docs)
    assert read_metadata(pretrain(longer, resume=True)).steps == 6
