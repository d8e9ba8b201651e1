"""The set-up stages of a training run, each testable alone.

    run = setup(cfg, resume, ctx)    # kernels, model, tokenizer, data, optimizer, resume state

`setup_model` builds (or loads) the model and its spec, `setup_tokenizer` trains or loads the
tokenizer, `setup_data` packs the documents, `setup_optimizer` makes the optimizer and
schedule, and `restore` loads a checkpoint's training state for `--resume`.
"""

from __future__ import annotations

import json
import logging
import shutil
import warnings
from pathlib import Path

import torch
import yaml
from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

from zoo.data.batches import MaskingConfig, PackedBlocks
from zoo.data.cache import TrainingCorpus, cached_tokenizer
from zoo.errors import UserError, ZooWarning
from zoo.models import PRESETS, family_of, get_spec, spec_from_hf_config
from zoo.models.fast_attention import use_fast_dropout
from zoo.models.spec import ModelSpec
from zoo.models.xformers_attention import check_xformers, use_xformers
from zoo.objectives import OBJECTIVES, Objective
from zoo.objectives.declared import built_in_option
from zoo.objectives.kernels import KERNELS
from zoo.registry import load_plugin, plugins_trusted
from zoo.tokenizers import complete_specials, load_tokenizer, special_ids
from zoo.train.atomic import atomic_dir_write
from zoo.train.checkpoint import load_model
from zoo.train.config import PretrainConfig
from zoo.train.distributed import DistContext
from zoo.train.layout import RUN_FILES, inputs_at_risk, run_written
from zoo.train.metadata import CheckpointMetadata, find_metadata, read_metadata
from zoo.train.optim import make_optimizer
from zoo.train.recipe import ResolvedRecipe, resolve_recipe, unreached_peak
from zoo.train.resume import check_same_text, restore, resume_changes, resume_point
from zoo.train.run import Counters, Lineage, Run
from zoo.train.schedule import make_scheduler
from zoo.train.step import TrainModule, prepare_for_objective
from zoo.writer import write_text


def check_kernels(cfg: PretrainConfig, device: str) -> None:
    """Vendor CUDA kernels are refused before anything is computed where they cannot run."""
    for name in ("ce_impl", "cwt_impl"):
        impl = built_in_option(cfg.loss, name)
        if impl in KERNELS:  # "plain" and "auto" are no kernel of their own
            KERNELS.get(impl).check_device(device, f"loss.{name}")
    if cfg.attention == "xformers":
        check_xformers(device)


def _untie_head(model: PreTrainedModel) -> None:
    """Give a weight-tied model its own LM head, initialised from a copy of the embeddings
    (the targets CWT trained). A model whose loss trained a separate target matrix (NCE)
    keeps that one as its head instead."""
    emb = model.get_input_embeddings()
    head = model.get_output_embeddings()
    if not isinstance(emb, torch.nn.Embedding) or not isinstance(head, torch.nn.Linear):
        raise UserError(f"{type(model).__name__} has no embedding and LM head to untie")
    model.config.tie_word_embeddings = False
    head.weight = torch.nn.Parameter(emb.weight.detach().clone())  # (V, D)


def setup_model(
    cfg: PretrainConfig, objective: Objective
) -> tuple[PreTrainedModel | None, ModelSpec, Lineage]:
    """The model loaded from `init_from` (None: built after seeding), its spec and lineage."""
    loss = cfg.loss.model_dump(mode="json")
    if cfg.init_from is None:
        return (
            None,
            get_spec(cfg.preset, cfg.vocab_size),
            Lineage(objective, loss, cfg.pretrain_key),
        )
    model = load_model(cfg.init_from)
    base = find_metadata(cfg.init_from)
    preset = base.preset if base is not None else cfg.preset
    if preset in PRESETS:
        spec = get_spec(preset, model.config.vocab_size)
        _check_preset(cfg.init_from, preset, spec, model.config)
    else:  # its metadata names a preset not registered here: the weights describe themselves
        spec = spec_from_hf_config(model.config, name=preset)
    if cfg.untie_head:
        if base is None:
            raise UserError(f"{cfg.init_from}: causal fine-tuning needs a headless-zoo checkpoint")
        pretrained = OBJECTIVES.get(base.objective)
        if not pretrained.headless:
            raise UserError(
                f"{cfg.init_from}: pretrained with {base.objective}, which trains its LM head; "
                "causal fine-tuning gives a headless decoder a head from its embeddings, which "
                "would replace that one. To train it on, pretrain with --init-from "
                f"{cfg.init_from}"
            )
        if not pretrained.needs_output_embeddings:  # NCE: its target matrix is the head
            _untie_head(model)
        lineage = Lineage(pretrained, base.loss, base.pretrain_key, True, base.pretrain_step)
        return model, spec, lineage
    return model, spec, Lineage(objective, loss, cfg.pretrain_key)


def _check_preset(path: str, preset: str, spec: ModelSpec, config: PretrainedConfig) -> None:
    """Refuse weights of another family or shape than the preset that will label the run:
    its FLOPs, its metadata and every leaderboard row would name a model that was not trained."""
    if family_of(config) is not type(spec):
        raise UserError(f"{path}: a {config.model_type} model, not preset {preset!r}")
    shape = type(spec).dims_from_hf_config(config)
    wanted = {name: getattr(spec, name) for name in shape}
    if shape != wanted:
        differ = ", ".join(
            f"{k} {shape[k]} (preset: {wanted[k]})" for k in shape if shape[k] != wanted[k]
        )
        raise UserError(
            f"{path}: not the shape of preset {preset!r}: {differ}; name the preset of its shape"
        )


def setup_tokenizer(
    cfg: PretrainConfig, spec: ModelSpec, corpus: TrainingCorpus, resume_from: Path | None
) -> tuple[PreTrainedTokenizerBase, str]:
    """(tokenizer, where it came from). A resumed run reloads the one its checkpoint holds;
    any other run takes the configured one or the one trained on the training documents
    (streamed; cached per corpus, so every rank and later run reads the same one);
    `write_resolved_config` then overwrites the output folder's `tokenizer/` with it."""
    if resume_from is not None:
        return load_tokenizer(str(resume_from)), read_metadata(resume_from).tokenizer.source
    if cfg.init_from is not None:
        return load_tokenizer(cfg.init_from), cfg.init_from
    if cfg.tokenizer is not None:
        return load_tokenizer(cfg.tokenizer), cfg.tokenizer
    return cached_tokenizer(corpus.train, spec.vocab_size, spec.kind), "trained"


def fit_vocabulary(
    cfg: PretrainConfig, spec: ModelSpec, tokenizer: PreTrainedTokenizerBase, source: str
) -> ModelSpec:
    """The spec whose vocabulary the model is built with. A given tokenizer decides it (no
    dead embedding rows); a tokenizer trained on the corpus must reach the requested size,
    unless `allow_smaller_vocab` (then the model takes the size it reached, with a warning)."""
    n = len(tokenizer)
    if cfg.init_from is not None:
        if n > spec.vocab_size:
            raise UserError(
                f"init_from: its tokenizer has {n} entries, its model {spec.vocab_size}"
            )
        if cfg.vocab_size is not None and cfg.vocab_size != spec.vocab_size:
            raise UserError(
                f"vocab_size: {cfg.vocab_size}, but init_from {cfg.init_from} has "
                f"{spec.vocab_size} embeddings (with init_from, leave vocab_size unset)"
            )
        return spec
    if source != "trained":  # a given tokenizer decides the vocabulary, either way
        if cfg.vocab_size is not None and cfg.vocab_size != n:
            raise UserError(
                f"vocab_size: {cfg.vocab_size}, but the tokenizer {source} has {n} entries "
                "(with a given tokenizer, leave vocab_size unset)"
            )
        return spec.with_vocab(n)
    if n > spec.vocab_size:
        raise UserError(f"tokenizer has {n} entries, more than vocab_size {spec.vocab_size}")
    if n == spec.vocab_size:
        return spec
    if not cfg.allow_smaller_vocab:
        raise UserError(
            f"vocab_size: the tokenizer trained on {', '.join(cfg.corpus)} reaches only {n} "
            f"entries, not {spec.vocab_size}: lower vocab_size, add text, or set "
            f"allow_smaller_vocab to train with {n}"
        )
    warnings.warn(
        f"vocab_size {spec.vocab_size} is out of reach of {', '.join(cfg.corpus)}: training "
        f"with the {n} entries its tokenizer reached",
        ZooWarning,
        stacklevel=2,
    )
    return spec.with_vocab(n)


def set_token_ids(model: PreTrainedModel, special: dict[str, int]) -> None:
    """The model's config (and generation config) name the ids the data pipeline uses: the
    pad id it pads with, and a decoder's end of text."""
    generation = model.generation_config if hasattr(model, "generation_config") else None
    for config in (model.config, generation):
        if config is None:
            continue
        config.pad_token_id = special["pad"]
        if "eos" in special:
            config.eos_token_id = config.bos_token_id = special["eos"]


def setup_data(
    tokenizer: PreTrainedTokenizerBase,
    spec: ModelSpec,
    recipe: ResolvedRecipe,
    corpus: TrainingCorpus,
    progress: bool = False,
) -> tuple[PackedBlocks, PackedBlocks]:
    """(train blocks [N, T], validation blocks [M, T]) over the corpus's cached token streams
    (tokenised on first use); a corpus under one batch is an error."""
    train, validation = corpus.streams(tokenizer, spec.kind, progress)
    special = special_ids(tokenizer, spec.kind)
    blocks = PackedBlocks(train, recipe.seq_len, spec.kind, special)  # (N, T)
    val_blocks = PackedBlocks(validation, recipe.seq_len, spec.kind, special)  # (M, T)
    if len(blocks) < recipe.micro_batch_size:
        raise UserError(
            f"corpus too small: {len(blocks)} blocks of {recipe.seq_len} tokens, fewer than one "
            f"micro-batch of {recipe.micro_batch_size}"
        )
    return blocks, val_blocks


def prepare_model(
    cfg: PretrainConfig,
    model: PreTrainedModel,
    spec: ModelSpec,
    objective: Objective,
    ctx: DistContext,
) -> PreTrainedModel:
    """Freeze what the objective never uses, move to the device, CPU dropout, probe mode."""
    prepare_for_objective(model, spec, objective)
    model.to(ctx.device)  # type: ignore[arg-type]  # transformers types .to as a wrapper
    if cfg.fast_dropout:
        use_fast_dropout(model)
    if cfg.attention == "xformers":
        use_xformers(model)
    if cfg.freeze_body:
        model.requires_grad_(False)
        model.get_output_embeddings().weight.requires_grad_(True)
    return model


def write_resolved_config(run: Run) -> None:
    """On the main process: `config.yaml` (the config as given, every field: `hlm pretrain
    --config` reads it back and repeats the run), `resolved.yaml` (the numbers the preset's
    recipe filled in, the model's kind and vocabulary, where the tokenizer came from) and
    `tokenizer/`."""
    if not run.ctx.is_main:
        return
    resolved = {
        "recipe": run.recipe.model_dump(mode="json"),
        "kind": run.spec.kind,
        "vocab_size": run.spec.vocab_size,
        "tokenizer_source": run.tokenizer_source,
    }
    run.out.mkdir(parents=True, exist_ok=True)
    for name, data in (("config.yaml", run.cfg.as_given()), ("resolved.yaml", resolved)):
        text = yaml.safe_dump(json.loads(json.dumps(data)), sort_keys=False)
        write_text(run.out / name, text)

    def write_tokenizer(folder: Path) -> None:
        run.tokenizer.save_pretrained(folder)

    atomic_dir_write(run.out / "tokenizer", write_tokenizer)


log = logging.getLogger(__name__)


def run_inputs(cfg: PretrainConfig) -> dict[str, str | None]:
    """The paths a run reads, by flag: what its output folder must not hold."""
    sources = [*cfg.corpus, *(cfg.validation or [])]
    local = {f"--corpus/--validation {s}": s for s in sources if Path(s).expanduser().exists()}
    return {"--init-from": cfg.init_from, "--tokenizer": cfg.tokenizer, **local}


def check_output_dir(out: Path, overwrite: bool, inputs: dict[str, str | None]) -> None:
    """A fresh run needs a folder with no run in it: one that holds a run is refused (its
    checkpoints would mix with the new run's on a later --resume), or with `overwrite`
    cleared whole, where it holds nothing a run does not write (`layout.run_written`). A path
    that is a file is refused, and so is a folder where an input of the run lies (`inputs`,
    flag -> path): the run would clear or write into what it reads."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--output-dir {out}: is a file, not a folder")
    if out.is_symlink() and overwrite:
        raise UserError(f"--output-dir {out}: is a link; --overwrite clears no folder through one")
    risky = inputs_at_risk(out, inputs)
    if risky:
        raise UserError(
            f"--output-dir {out}: the run reads {', '.join(risky)}, which lies in that folder "
            "or its run: choose another --output-dir (nothing was removed)"
        )
    held = [name for name in RUN_FILES if (out / name).exists()]
    if not held:
        return
    if not overwrite:
        raise UserError(
            f"--output-dir {out}: holds a run already ({', '.join(held)}); pass --resume to "
            "continue it, --overwrite to clear it and start anew, or choose another folder"
        )
    foreign = sorted(p.name for p in out.iterdir() if not run_written(p.name))
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise UserError(
            f"--output-dir {out}: --overwrite clears a run's folder, and this one also holds "
            f"what no run writes ({shown}): choose another folder, or move those out first"
        )
    log.warning("--overwrite: clearing %s", out)
    shutil.rmtree(out)


def parent_metadata(init_from: str) -> CheckpointMetadata:
    """The metadata of the checkpoint a run starts from: a folder's, or a Hub repository's
    (a published headless-zoo checkpoint); an error naming the missing file otherwise."""
    return find_metadata(init_from) or read_metadata(init_from)


def setup(
    cfg: PretrainConfig, resume: bool | str, ctx: DistContext, until: int | None = None
) -> Run:
    """Every set-up stage in order; the returned run is ready for `zoo.train.loop.fit`.
    With `until` (a step of a run already in its folder), the run restarts from its newest
    checkpoint before that step, or from its initialisation, and leaves its files as they are."""
    check_kernels(cfg, ctx.device.type)
    for plugin in cfg.plugins:  # imported by load_config or the suite, where trust was decided
        load_plugin(plugin, trusted=plugins_trusted())
    objective = OBJECTIVES.get(cfg.objective)
    if not cfg.output_dir.strip():
        raise UserError("--output-dir: empty; name the folder the run writes to")
    out = Path(cfg.output_dir)
    if not resume and until is None:
        check_output_dir(out, cfg.overwrite, run_inputs(cfg))
    checkpoint = resume_point(out, resume if until is None else True, until)
    # the settings first: a changed seed or corpus is named as such, not as changed text
    changes = resume_changes(cfg, out, checkpoint) if checkpoint is not None else {}
    model, spec, lineage = setup_model(cfg, objective)
    recipe = resolve_recipe(cfg, spec, ctx.world_size)
    if checkpoint is None and (why := unreached_peak(cfg, recipe, spec)) and ctx.is_main:
        warnings.warn(why, ZooWarning, stacklevel=2)
    corpus = cfg.training_text()
    contents = corpus.contents()
    if checkpoint is not None:
        check_same_text(checkpoint, out, contents, cfg.corpus)
    tokenizer, source = setup_tokenizer(cfg, spec, corpus, checkpoint)
    added = (  # a given tokenizer may lack some; a resumed run's already has them
        read_metadata(checkpoint).tokenizer.added_specials
        if checkpoint is not None
        else complete_specials(tokenizer, spec.kind)
    )
    spec = fit_vocabulary(cfg, spec, tokenizer, source)
    blocks, val_blocks = setup_data(tokenizer, spec, recipe, corpus, cfg.progress and ctx.is_main)
    torch.manual_seed(cfg.seed)
    special = special_ids(tokenizer, spec.kind)
    if model is None:
        model = spec.build(tie_word_embeddings=not objective.needs_output_embeddings)
    set_token_ids(model, special)
    model = prepare_model(cfg, model, spec, objective, ctx)
    options = objective.options_from(cfg.loss)  # its own model even for an unvalidated copy
    step = TrainModule(model, spec, objective, options, cfg.prune_last_layer)
    ctx.shard(step, spec.shard_units(model))  # FSDP: before the optimizer sees the parameters
    optimizer = make_optimizer(model, spec, objective, recipe, cfg.sparse_embeddings)
    run = Run(
        cfg=cfg,
        ctx=ctx,
        out=out,
        objective=objective,
        options=options,
        spec=spec,
        recipe=recipe,
        model=model,
        step=step,
        tokenizer=tokenizer,
        tokenizer_source=source,
        special=special,
        blocks=blocks,
        val_blocks=val_blocks,
        masking=MaskingConfig(probability=cfg.mlm_probability),
        optimizer=optimizer,
        scheduler=make_scheduler(
            optimizer, recipe.schedule, recipe.warmup_steps, recipe.steps, recipe.min_lr_ratio
        ),
        lineage=lineage,
        added_specials=added,
        corpus_contents=contents,
    )
    if lineage.causal_finetune:  # fine-tuning continues the pretraining budget (paper Fig. 4)
        base = parent_metadata(str(cfg.init_from))
        run.counters = Counters(0, base.tokens_seen, base.train_flops, base.wall_seconds)
        run.start_tokens = base.tokens_seen
    if checkpoint is not None:
        restore(run, checkpoint, changes)
    elif until is None or not (out / "config.yaml").is_file():
        write_resolved_config(run)
    return run
