"""One benchmark variant stepping on a fixed batch: shared by `hlm bench`, its fresh-process
probe and the `throughput` task.

    s = Stepper(get_spec("bert-small", 50_000), Variant(objective="cwt", sparse=True), 32, 128)
    seconds = s.step()
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from zoo.data.batches import IGNORE, clm_labels
from zoo.flops import body_forward_flops, train_step_flops
from zoo.models.fast_attention import use_fast_dropout
from zoo.models.spec import ModelSpec
from zoo.objectives import OBJECTIVES, LossOptions, ObjectiveOptions
from zoo.train.optim import clip_grad_norm, make_optimizer
from zoo.train.recipe import ResolvedRecipe
from zoo.train.step import TrainModule, last_layer_queries, prepare_for_objective


@dataclass(frozen=True)
class Variant:
    """What differs between the training steps a benchmark compares.

    hf_default: the reference vanilla step of Hugging Face (`model(input_ids, labels=...)`),
    which projects every position onto the vocabulary and runs the whole last layer.
    Otherwise the step is the pretraining one (`TrainModule`) with `objective` and `loss`.
    Every variant draws its CPU dropout masks with `use_fast_dropout` unless `fast_dropout`
    is off, so that they differ only in the head and the loss.
    """

    objective: str = "cwt"
    loss: ObjectiveOptions = field(default_factory=LossOptions)  # a superset: any built-in reads it
    hf_default: bool = False
    sparse: bool = False
    bf16: bool = False
    prune_last_layer: bool = True
    fast_dropout: bool = True
    compile: bool = False  # the training step's module through torch.compile
    # with `compile`: its "reduce-overhead" mode, which replays the step's kernels as CUDA
    # graphs on a GPU (one launch for the whole forward and backward; inductor alone on a CPU)
    cuda_graphs: bool = False

    def __post_init__(self) -> None:
        if self.cuda_graphs and not self.compile:
            raise ValueError("Variant(cuda_graphs=True) needs compile=True: torch.compile graphs")


def synthetic_batch(
    spec: ModelSpec, batch: int, seq: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens with 15% MLM targets (encoder) or next-token labels (decoder)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(8, spec.vocab_size, (batch, seq), generator=g)
    if spec.kind == "decoder":
        return ids, clm_labels(ids)
    pick = torch.rand(ids.shape, generator=g) < 0.15
    return ids.masked_fill(pick, 4), ids.masked_fill(~pick, IGNORE)


def _recipe(batch: int, seq: int) -> ResolvedRecipe:
    return ResolvedRecipe(
        steps=1,
        batch_size=batch,
        micro_batch_size=batch,
        grad_accum=1,
        seq_len=seq,
        lr=1e-4,
        weight_decay=0.01,
        betas=(0.9, 0.999),
        eps=1e-8,
        grad_clip=1.0,
        schedule="constant",
        warmup_steps=0,
    )


class Stepper:
    """A model + objective + optimizer of one `Variant`, stepping on a fixed batch."""

    def __init__(
        self,
        spec: ModelSpec,
        variant: Variant,
        batch: int,
        seq: int,
        seed: int = 0,
        device: str = "cpu",
    ) -> None:
        torch.manual_seed(seed)
        self.spec, self.variant = spec, variant
        self.objective = OBJECTIVES.get(variant.objective)
        self.model = spec.build(tie_word_embeddings=not self.objective.needs_output_embeddings)
        prepare_for_objective(self.model, spec, self.objective)
        self.device = torch.device(device)
        self.model.to(self.device)  # type: ignore[arg-type]  # transformers types .to as a wrapper
        if variant.fast_dropout:  # as pretraining does by default (PretrainConfig.fast_dropout)
            use_fast_dropout(self.model)
        self.module = TrainModule(
            self.model, spec, self.objective, variant.loss, variant.prune_last_layer
        )
        if variant.compile:
            mode = "reduce-overhead" if variant.cuda_graphs else None
            self.module = torch.compile(self.module, mode=mode)  # type: ignore[assignment]
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = make_optimizer(
            self.model, spec, self.objective, _recipe(batch, seq), variant.sparse
        )
        inputs, labels = synthetic_batch(spec, batch, seq, seed)
        self.inputs, self.labels = inputs.to(self.device), labels.to(self.device)
        self.k = int((self.labels != IGNORE).sum())
        self.flops = self._flops(batch, seq)
        self.n_params = sum(p.numel() for p in self.model.parameters())

    def _flops(self, batch: int, seq: int) -> float:
        spec = self.spec
        if self.variant.hf_default:  # every position through the head
            extra = 2.0 * spec.hidden_size * spec.hidden_size if spec.is_encoder else 0.0
            head = batch * seq * (2.0 * spec.hidden_size * spec.vocab_size + extra)
            return 3.0 * (body_forward_flops(spec, batch, seq) + head)
        queries = last_layer_queries(spec, self.labels != IGNORE, self.variant.prune_last_layer)
        return train_step_flops(spec, self.objective, batch, seq, self.k, queries)

    def step(self) -> float:
        """One training step; its wall seconds (CUDA-synchronised on a GPU)."""
        t = time.perf_counter()
        if self.variant.cuda_graphs:  # a new step: the last replay's outputs may be overwritten
            torch.compiler.cudagraph_mark_step_begin()
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.variant.bf16):
            if self.variant.hf_default:
                hf_labels = self.labels if self.spec.is_encoder else self.inputs
                loss = self.model(input_ids=self.inputs, labels=hf_labels).loss
            else:
                loss = self.module(self.inputs, self.labels)["loss"]
        loss.backward()
        clip_grad_norm(self.params, 1.0)
        self.opt.step()
        if self.device.type == "cuda":  # the kernels were only queued
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - t
