"""Model specs: frozen dataclasses with explicit numbers, and the paper's recipe per preset.

A spec says what to build (family, sizes, vocabulary); a `Recipe` says how the paper trained it
(Appendix D). Family files (`bert.py`, `gpt_neox.py`, `gpt2.py`, `llama.py`) subclass
`ModelSpec` (decoders its `DecoderSpec`, which holds what every causal LM shares) and know how
to build their Hugging Face model, reach its body, head and embeddings, which `Auto*` class
loads it, and how to describe an existing checkpoint's config as a spec. Code outside a family
file dispatches through these, never through the model type's name.

A spec is plain numbers: making one, or listing the presets, imports neither torch nor
transformers (seconds); the methods that build or reach into a model import them when called.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from torch import Tensor, nn
    from transformers import PretrainedConfig, PreTrainedModel

    from zoo.objectives.base import VocabHead

Kind = Literal["encoder", "decoder"]
Schedule = Literal["triangular", "cosine", "constant"]


@dataclass(frozen=True)
class Recipe:
    """Pretraining hyper-parameters from the paper (Appendix D) for one preset.

    `batch_size` is the global batch (sequences per optimizer step). `headless` holds the
    values the paper's tables give separately for headless models (Table 7: "vanilla /
    headless"), applied by `for_objective`. `min_lr_ratio` is where the cosine schedule ends,
    as a fraction of the peak (Pythia's 10%)."""

    lr: float
    weight_decay: float
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    grad_clip: float = 1.0
    schedule: Schedule = "triangular"
    warmup_steps: int = 10_000
    steps: int = 1_000_000
    seq_len: int = 128
    batch_size: int = 64
    min_lr_ratio: float = 0.0
    headless: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        names = {f.name for f in dataclasses.fields(self)} - {"headless"}
        unknown = [k for k, _ in self.headless if k not in names]
        if unknown:
            raise ValueError(f"Recipe.headless: unknown recipe fields {unknown}")

    def for_objective(self, headless: bool) -> Recipe:
        """This recipe with the headless values where the objective is headless."""
        return dataclasses.replace(self, **dict(self.headless), headless=()) if headless else self


# The CPU-test decoders' recipe (pythia-tiny, llama-tiny): Pythia's shape (AdamW 0.9 / 0.95,
# decay 0.1, cosine to 10 %) at a few hundred steps of 16 x 128 tokens.
TINY_DECODER_RECIPE = Recipe(
    lr=1e-3,
    weight_decay=0.1,
    betas=(0.9, 0.95),
    schedule="cosine",
    warmup_steps=20,
    steps=200,
    seq_len=128,
    batch_size=16,
    min_lr_ratio=0.1,
)


@dataclass(frozen=True)
class ModelSpec:
    """Base for every family; subclasses fill `family`, `kind` and the builder methods."""

    family: ClassVar[str]  # the Hugging Face config.model_type
    kind: ClassVar[Kind]
    auto_class_name: ClassVar[str]  # "AutoModelForMaskedLM", ...: the class that loads one
    pipeline_tag: ClassVar[str]  # the Hub pipeline a trained-head checkpoint of it serves

    name: str
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    max_positions: int
    recipe: Recipe
    tied: bool = True  # the head shares the input embeddings (False: Pythia's separate head)
    kv_heads: int | None = None  # key / value heads (grouped-query attention); None: num_heads
    mlp_matrices: int = 2  # [D, I] matrices of the feed-forward block: 2 (up, down), 3 gated

    def with_vocab(self, vocab_size: int) -> ModelSpec:
        return dataclasses.replace(self, vocab_size=vocab_size)

    @classmethod
    def auto_class(cls) -> Any:
        """The transformers `Auto*` class that loads a checkpoint of this family."""
        return getattr(importlib.import_module("transformers"), cls.auto_class_name)

    # --- to be provided by each family -------------------------------------------------
    @classmethod
    def dims_from_hf_config(cls, config: PretrainedConfig) -> dict[str, int]:
        """hidden_size, num_layers, num_heads, intermediate_size, max_positions of a config
        (the common Hugging Face names; families with other names override this)."""
        return {
            "hidden_size": config.hidden_size,
            "num_layers": config.num_hidden_layers,
            "num_heads": config.num_attention_heads,
            "intermediate_size": config.intermediate_size,
            "max_positions": config.max_position_embeddings,
        }

    @classmethod
    def from_hf_config(cls, config: PretrainedConfig, name: str, recipe: Recipe) -> ModelSpec:
        """A spec describing an existing checkpoint's architecture (FLOP counts, evaluation)."""
        return cls(
            name=name,
            vocab_size=config.vocab_size,
            recipe=recipe,
            tied=bool(config.tie_word_embeddings),
            **cls.dims_from_hf_config(config),
        )

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        """A randomly initialised Hugging Face model (ForMaskedLM / ForCausalLM); its head is
        tied to the input embeddings where both `tie_word_embeddings` and `self.tied` are."""
        raise NotImplementedError

    @staticmethod
    def body(model: PreTrainedModel, input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
        """The transformer body's last hidden state [B, T, D] (after any final LayerNorm): the
        model's `base_model` (the module Hugging Face's `base_model_prefix` names), no head."""
        out = model.base_model(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state  # (B, T, D)

    @classmethod
    def selected_body(
        cls,
        model: PreTrainedModel,
        input_ids: Tensor,
        attention_mask: Tensor | None,
        selected: Tensor,
    ) -> Tensor:
        """The last hidden state at the `selected` [B, T] positions only: [K, D], row-major.

        Families may skip work whose output no loss reads (the encoder's last layer at
        unselected positions); the default runs the whole body and gathers."""
        return cls.body(model, input_ids, attention_mask)[selected]

    @staticmethod
    def vocab_head(model: PreTrainedModel) -> VocabHead:
        raise NotImplementedError

    @staticmethod
    def head_only_modules(model: PreTrainedModel) -> list[nn.Module]:
        """Modules used only by the vocabulary head (frozen and skipped by headless objectives)."""
        raise NotImplementedError

    @classmethod
    def shard_units(cls, model: PreTrainedModel) -> list[nn.Module]:
        """The modules FSDP shards as units of their own (gathered when their forward runs):
        the transformer blocks (Hugging Face's `_no_split_modules`) that hold no input
        embedding; the embeddings, the head and the rest form the root unit. A family whose
        `selected_body` calls into a block without its forward leaves that block out."""
        names = set(model._no_split_modules or [])
        emb = cls.input_embeddings(model).weight
        return [
            m
            for m in model.modules()
            if type(m).__name__ in names and all(p is not emb for p in m.parameters())
        ]

    # --- shared ---------------------------------------------------------------------------
    @staticmethod
    def input_embeddings(model: PreTrainedModel) -> nn.Embedding:
        from torch import nn

        emb = model.get_input_embeddings()
        assert isinstance(emb, nn.Embedding)
        return emb

    @staticmethod
    def output_embeddings(model: PreTrainedModel) -> Tensor:
        """The output (decoder) weight [V, D]; a separate matrix when the model is untied."""
        out = model.get_output_embeddings()
        assert out is not None
        return out.weight

    @property
    def is_encoder(self) -> bool:
        return self.kind == "encoder"

    @property
    def kv_size(self) -> int:
        """Width of the keys (and of the values): head size x key / value heads."""
        heads = self.num_heads if self.kv_heads is None else self.kv_heads
        return self.hidden_size // self.num_heads * heads

    def layer_params(self) -> int:
        """Matrix parameters of one block, as the family describes it: queries and output
        [D, D], keys and values [D, kv] each, and the feed-forward block's [D, I] matrices."""
        d = self.hidden_size
        return 2 * d * d + 2 * d * self.kv_size + self.mlp_matrices * d * self.intermediate_size

    def body_params(self) -> int:
        """Non-embedding matrix parameters of the transformer body (analytic, for FLOPs)."""
        return self.num_layers * self.layer_params()


def _identity(x: Tensor) -> Tensor:
    return x


@dataclass(frozen=True)
class DecoderSpec(ModelSpec):
    """Base for causal-LM families: a plain linear head (`lm_head`, tied to the input embeddings
    or not) on the body's last hidden state, no module of its own before it, and the special
    tokens of the zoo's decoder tokenizers. A family adds `build` (from `decoder_config`)."""

    kind: ClassVar[Kind] = "decoder"
    auto_class_name: ClassVar[str] = "AutoModelForCausalLM"
    pipeline_tag: ClassVar[str] = "text-generation"

    def decoder_config(self, tie_word_embeddings: bool) -> dict[str, Any]:
        """The config values every decoder family's Hugging Face config takes by these names."""
        from zoo.tokenizers import DECODER_SPECIALS

        return {
            "vocab_size": self.vocab_size,
            "tie_word_embeddings": tie_word_embeddings and self.tied,
            "bos_token_id": DECODER_SPECIALS.index("<|endoftext|>"),  # the tokenizer's ids
            "eos_token_id": DECODER_SPECIALS.index("<|endoftext|>"),
            "pad_token_id": DECODER_SPECIALS.index("<|pad|>"),
            "attn_implementation": "sdpa",
        }

    @classmethod
    def vocab_head(cls, model: PreTrainedModel) -> VocabHead:
        from zoo.objectives.base import VocabHead

        return VocabHead(transform=_identity, weight=cls.output_embeddings(model), bias=None)

    @staticmethod
    def head_only_modules(model: PreTrainedModel) -> list[nn.Module]:
        return []


def padded_row_count(selected: Tensor) -> int:
    """selected (Tensor): [B, T] bool -> the longest row's count of selected positions (at
    least 1): the rows per batch entry of an encoder's pruned last layer (`selected_body`)."""
    return max(int(selected.sum(1).max()), 1)
