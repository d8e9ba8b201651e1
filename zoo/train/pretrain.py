"""The pretraining loop: plain PyTorch, small on purpose (the loss is the subject).

    final_dir = pretrain(PretrainConfig(preset="bert-tiny", objective="cwt", output_dir="runs/x"))

Output folder layout:
    config.yaml               the resolved configuration
    tokenizer/                the tokenizer (trained on the corpus unless one was given)
    metrics.jsonl             one JSON line per log / eval step (step, loss, lr, tokens/s, peak RSS)
    checkpoints/step-N/       HF checkpoint + training_state.pt (every `save_every` steps)
    final/                    HF checkpoint at the end (AutoModelForMaskedLM / ForCausalLM)

Batches and dropout are functions of (seed, step, micro-step, rank), so `resume=True`
reproduces the loss curve of an uninterrupted run.
"""

from __future__ import annotations

import json
import math
import resource
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import yaml
from tqdm import tqdm

from zoo.data.batches import IGNORE, BatchSampler, MaskingConfig, pack
from zoo.data.corpus import load_documents, split_documents
from zoo.errors import TrainingDiverged, UserError
from zoo.flops import train_step_flops
from zoo.models import get_spec, spec_for_model_type
from zoo.models.fast_attention import use_fast_dropout
from zoo.models.spec import ModelSpec
from zoo.numerics import flush_denormal
from zoo.objectives import OBJECTIVES
from zoo.objectives.base import ObjectiveOptions
from zoo.objectives.external import EXTERNAL, check_external
from zoo.registry import load_plugin
from zoo.tokenizers import load_tokenizer, special_ids, train_tokenizer
from zoo.train.checkpoint import STATE, list_checkpoints, load_model, read_metadata, save_checkpoint
from zoo.train.config import PretrainConfig, ResolvedRecipe
from zoo.train.distributed import (
    DistContext,
    init_distributed,
    resolve_device,
    shutdown_distributed,
)
from zoo.train.evaluate import make_labels, validation_metrics
from zoo.train.optim import clip_grad_norm, make_optimizer
from zoo.train.schedule import make_scheduler
from zoo.train.step import TrainModule, last_layer_queries, prepare_for_objective


def peak_rss_mb() -> float:
    """High-water mark of this process's resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def resolve_recipe(cfg: PretrainConfig, spec: ModelSpec) -> ResolvedRecipe:
    r = spec.recipe

    def pick(value: Any, default: Any) -> Any:
        return default if value is None else value

    return ResolvedRecipe(
        steps=pick(cfg.steps, r.steps),
        batch_size=pick(cfg.batch_size, r.batch_size),
        grad_accum=cfg.grad_accum,
        seq_len=pick(cfg.seq_len, r.seq_len),
        lr=pick(cfg.lr, r.lr),
        weight_decay=pick(cfg.weight_decay, r.weight_decay),
        betas=pick(cfg.betas, r.betas),
        eps=pick(cfg.eps, r.eps),
        grad_clip=pick(cfg.grad_clip, r.grad_clip),
        schedule=pick(cfg.schedule, r.schedule),
        warmup_steps=pick(cfg.warmup_steps, r.warmup_steps),
    )


def _step_seed(seed: int, step: int, micro: int, rank: int) -> int:
    return ((seed * 1_000_003 + step) * 101 + micro) * 131 + rank


def _untie_head(model: Any) -> None:
    """Give a weight-tied model its own LM head, initialised from a copy of the embeddings."""
    emb = model.get_input_embeddings().weight
    model.config.tie_word_embeddings = False
    head = model.get_output_embeddings()
    head.weight = torch.nn.Parameter(emb.detach().clone())


class _MetricsLog:
    """metrics.jsonl, appended and flushed line by line (a killed run keeps what it logged)."""

    def __init__(self, path: Path, enabled: bool, truncate_after: int | None) -> None:
        self.path, self.enabled = path, enabled
        if enabled and truncate_after is not None and path.exists():
            keep = [
                ln
                for ln in path.read_text().splitlines()
                if ln and json.loads(ln)["step"] <= truncate_after
            ]
            path.write_text("".join(ln + "\n" for ln in keep))
        elif enabled and path.exists():
            path.unlink()

    def write(self, row: dict[str, Any]) -> None:
        if self.enabled:
            with self.path.open("a") as f:
                f.write(json.dumps(row) + "\n")


def prepare_documents(cfg: PretrainConfig) -> tuple[list[str], list[str]]:
    """(train, validation) documents of a config: its validation sources, or a held-out split."""
    docs = load_documents(cfg.corpus)
    if cfg.max_documents is not None:
        docs = docs[: cfg.max_documents]
    if cfg.validation:
        return docs, load_documents(cfg.validation)
    return split_documents(docs, cfg.validation_fraction, cfg.seed)


def pretrain(cfg: PretrainConfig, resume: bool = False) -> Path:
    """Train per `cfg`; returns the final checkpoint folder."""
    ctx = init_distributed(resolve_device(cfg.device))
    try:
        with flush_denormal(cfg.flush_denormal):
            return _pretrain(cfg, resume, ctx)
    finally:
        shutdown_distributed(ctx)


def _pretrain(cfg: PretrainConfig, resume: bool, ctx: DistContext) -> Path:
    for key, impl in (("ce_impl", cfg.ce_impl), ("cwt_impl", cfg.cwt_impl)):
        if impl in EXTERNAL:  # vendor CUDA kernels: checked before anything is computed
            check_external(impl, ctx.device.type, key)
    for plugin in cfg.plugins:
        load_plugin(plugin)
    objective = OBJECTIVES.get(cfg.objective)
    out = Path(cfg.output_dir)
    checkpoints = list_checkpoints(out) if resume else []
    if resume and not checkpoints and not (out / "final").is_dir():
        raise UserError(f"--resume: no checkpoint with training state under {out}/checkpoints")
    if ctx.is_main:
        out.mkdir(parents=True, exist_ok=True)

    # --- model and spec ---------------------------------------------------------------------
    spec: ModelSpec | type[ModelSpec]
    if cfg.init_from is not None:
        model = load_model(cfg.init_from)
        spec_cls = spec_for_model_type(model.config.model_type)
        spec = spec_cls
        kind = spec_cls.kind
        preset = read_metadata(cfg.init_from).get("preset", cfg.preset)
        base_spec = get_spec(preset, model.config.vocab_size) if preset in _preset_names() else None
        if cfg.untie_head:
            _untie_head(model)
    else:
        base_spec = get_spec(cfg.preset, cfg.vocab_size)
        spec = base_spec
        kind = base_spec.kind
        model = None
    if base_spec is None:
        raise UserError(f"preset {cfg.preset!r} unknown for checkpoint {cfg.init_from}")
    recipe = resolve_recipe(cfg, base_spec)

    # --- data and tokenizer -----------------------------------------------------------------
    train_docs, val_docs = prepare_documents(cfg)
    tok_dir = out / "tokenizer"
    if cfg.init_from is not None:
        tokenizer = load_tokenizer(cfg.init_from)
    elif (resume and tok_dir.is_dir()) or (
        cfg.tokenizer is None and tok_dir.is_dir() and ctx.enabled
    ):
        tokenizer = load_tokenizer(str(tok_dir))
    elif cfg.tokenizer is not None:
        tokenizer = load_tokenizer(cfg.tokenizer)
    else:
        tokenizer = train_tokenizer(train_docs, base_spec.vocab_size, kind)
    if ctx.is_main and not tok_dir.is_dir():
        tokenizer.save_pretrained(tok_dir)
    if len(tokenizer) > base_spec.vocab_size:
        raise UserError(
            f"tokenizer has {len(tokenizer)} entries, more than the model's vocab_size {base_spec.vocab_size}"
        )
    special = special_ids(tokenizer, kind)
    blocks = pack(train_docs, tokenizer, recipe.seq_len, kind)  # (N, T)
    val_blocks = pack(val_docs, tokenizer, recipe.seq_len, kind)
    per_step = recipe.batch_size * recipe.grad_accum * ctx.world_size
    if len(blocks) < recipe.batch_size:
        raise UserError(
            f"corpus too small: {len(blocks)} blocks of {recipe.seq_len} tokens, fewer than one batch of {recipe.batch_size}"
        )

    torch.manual_seed(cfg.seed)
    if model is None:
        assert isinstance(spec, ModelSpec)
        model = spec.build(tie_word_embeddings=not objective.needs_output_embeddings)
    prepare_for_objective(model, spec, objective)
    model.to(ctx.device)  # type: ignore[arg-type]  # transformers types .to as a wrapper
    if cfg.fast_dropout:
        use_fast_dropout(model)
    if cfg.freeze_body:
        model.requires_grad_(False)
        model.get_output_embeddings().weight.requires_grad_(True)
    options = ObjectiveOptions(
        temperature=cfg.temperature,
        duplicates=cfg.duplicates,  # type: ignore[arg-type]
        cwt_impl=cfg.cwt_impl,
        ce_impl=cfg.ce_impl,
        chunk=cfg.loss_chunk,
        negatives=cfg.negatives,
    )
    masking = MaskingConfig(probability=cfg.mlm_probability)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(model, spec, objective, recipe, cfg.sparse_embeddings)
    sched = make_scheduler(opt, recipe.schedule, recipe.warmup_steps, recipe.steps)

    start_step, tokens_seen, flops, wall = 0, 0, 0.0, 0.0
    if cfg.init_from is not None and cfg.untie_head:
        # causal fine-tuning continues the pretraining budget (paper Fig. 4 counts both)
        base = read_metadata(cfg.init_from)
        tokens_seen, flops, wall = (
            int(base.get("tokens_seen", 0)),
            float(base.get("train_flops", 0.0)),
            float(base.get("wall_seconds", 0.0)),
        )
    if checkpoints:
        last = checkpoints[-1]
        state = torch.load(last / STATE, weights_only=False)
        from safetensors.torch import load_file

        model.load_state_dict(load_file(str(last / "model.safetensors")), strict=False)
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        start_step, tokens_seen, flops, wall = (
            state["step"],
            state["tokens_seen"],
            state["flops"],
            state["wall_seconds"],
        )
    log = _MetricsLog(out / "metrics.jsonl", ctx.is_main, start_step if resume else None)
    if ctx.is_main:
        resolved = {
            **cfg.model_dump(),
            "recipe": recipe.model_dump(),
            "kind": kind,
            "vocab_size": base_spec.vocab_size,
        }
        (out / "config.yaml").write_text(
            yaml.safe_dump(json.loads(json.dumps(resolved)), sort_keys=False)
        )

    train_module = ctx.wrap(TrainModule(model, spec, objective, options, cfg.prune_last_layer))
    sampler = BatchSampler(len(blocks), cfg.seed)
    n_params = sum(p.numel() for p in model.parameters())
    meta_base = {
        "objective": objective.name,
        "headless": objective.headless,
        "preset": base_spec.name,
        "family": base_spec.family,
        "kind": kind,
        "vocab_size": base_spec.vocab_size,
        "device": ctx.device.type,
        "seq_len": recipe.seq_len,
        "batch_size": per_step,
        "seed": cfg.seed,
        "params": n_params,
        "init_from": cfg.init_from,
        "finetuned_causal": cfg.untie_head
        or read_metadata(cfg.init_from or "").get("finetuned_causal", False),
        "recipe": recipe.model_dump(),
        "corpus": cfg.corpus,
    }

    def metadata(step: int) -> dict[str, Any]:
        return {
            **meta_base,
            "steps": step,
            "tokens_seen": tokens_seen,
            "train_flops": flops,
            "wall_seconds": wall,
        }

    def batches(step: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for micro in range(recipe.grad_accum):
            first = step * per_step + (micro * ctx.world_size + ctx.rank) * recipe.batch_size
            idx = sampler.indices(first, recipe.batch_size)
            gen = torch.Generator().manual_seed(_step_seed(cfg.seed, step, micro, ctx.rank))
            torch.manual_seed(_step_seed(cfg.seed, step, micro, ctx.rank) + 7)  # dropout
            inputs, labels = make_labels(
                spec, blocks[idx], base_spec.vocab_size, special, masking, gen
            )
            yield inputs.to(ctx.device), labels.to(ctx.device)

    def evaluate(step: int) -> dict[str, float]:
        m = validation_metrics(
            model,
            spec,
            objective,
            options,
            val_blocks,
            recipe.batch_size,
            cfg.eval_batches,
            special,
            masking,
        )
        row = {"step": step, "tokens_seen": tokens_seen, "train_flops": flops, **m}
        log.write(row)
        return m

    model.train()
    bar = tqdm(
        total=recipe.steps,
        initial=start_step,
        disable=not (cfg.progress and ctx.is_main),
        desc=f"{base_spec.name}/{objective.name}",
        unit="step",
    )
    last_val: dict[str, float] = {}
    if cfg.eval_every and start_step == 0:
        evaluate(0)  # the curve's origin
    for step in range(start_step, recipe.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logs: dict[str, float] = {}
        for inputs, labels in batches(step):
            with torch.autocast(ctx.device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
                result = train_module(inputs, labels)
            loss = result["loss"] / recipe.grad_accum
            if not torch.isfinite(loss):
                raise TrainingDiverged(
                    f"loss is {float(loss.detach())} at step {step + 1}; last good checkpoint kept in {out}/checkpoints "
                    "(lower the learning rate or enable gradient clipping)"
                )
            loss.backward()
            selected = labels != IGNORE  # (B, T)
            queries = last_layer_queries(base_spec, selected, cfg.prune_last_layer)
            flops += ctx.world_size * train_step_flops(
                base_spec,
                objective,
                recipe.batch_size,
                recipe.seq_len,
                int(selected.sum()),
                queries,
            )
            for name, value in result.items():
                logs[name] = logs.get(name, 0.0) + float(value.detach()) / recipe.grad_accum
        if recipe.grad_clip > 0:
            clip_grad_norm(params, recipe.grad_clip)
        opt.step()
        sched.step()
        dt = time.perf_counter() - t0
        wall += dt
        tokens_seen += per_step * recipe.seq_len
        done = step + 1
        loss_value = ctx.all_reduce_mean(logs["loss"])
        bar.set_postfix(loss=f"{loss_value:.3f}", tok_s=f"{per_step * recipe.seq_len / dt:.0f}")
        bar.update(1)
        if done % cfg.log_every == 0 or done == recipe.steps or done == 1:
            log.write(
                {
                    "step": done,
                    "loss": loss_value,
                    **{k_: v for k_, v in logs.items() if k_ != "loss"},
                    "lr": sched.get_last_lr()[0],
                    "tokens_per_s": per_step * recipe.seq_len / dt,
                    "step_seconds": dt,
                    "tokens_seen": tokens_seen,
                    "train_flops": flops,
                    "peak_rss_mb": peak_rss_mb(),
                }
            )
        if cfg.eval_every and done % cfg.eval_every == 0 and done != recipe.steps:
            last_val = evaluate(done)
            bar.set_postfix(loss=f"{loss_value:.3f}", val=f"{last_val['val_loss']:.3f}")
        if cfg.save_every and done % cfg.save_every == 0 and done != recipe.steps and ctx.is_main:
            state = {
                "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(),
                "step": done,
                "tokens_seen": tokens_seen,
                "flops": flops,
                "wall_seconds": wall,
            }
            save_checkpoint(
                out / "checkpoints" / f"step-{done:07d}", model, tokenizer, metadata(done), state
            )
        ctx.barrier()
    bar.close()
    final = out / "final"
    last_val = evaluate(recipe.steps)
    if ctx.is_main:
        save_checkpoint(final, model, tokenizer, {**metadata(recipe.steps), **last_val})
    ctx.barrier()
    if not math.isfinite(last_val["val_loss"]):
        raise TrainingDiverged(f"validation loss is {last_val['val_loss']} at the end of training")
    return final


def _preset_names() -> list[str]:
    from zoo.models import PRESETS

    return PRESETS.names()
