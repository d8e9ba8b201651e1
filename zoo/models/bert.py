"""BERT-like encoders (BertForMaskedLM) and their presets.

Numbers follow the Hugging Face releases the paper uses (google/bert_uncased_L-*, bert-base,
distilbert-base-multilingual-cased's shape). As in `zoo.models.spec`, torch and
transformers are imported by the methods that build or run a model, not with the presets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import Kind, ModelSpec, Recipe, padded_row_count

if TYPE_CHECKING:
    from torch import Tensor, nn
    from transformers import BertForMaskedLM, PreTrainedModel
    from transformers.models.bert.modeling_bert import BertLayer, BertSelfAttention

    from zoo.objectives.base import VocabHead


@FAMILIES.register("bert")
@dataclass(frozen=True)
class BertSpec(ModelSpec):
    family: ClassVar[str] = "bert"
    kind: ClassVar[Kind] = "encoder"
    auto_class_name: ClassVar[str] = "AutoModelForMaskedLM"
    pipeline_tag: ClassVar[str] = "fill-mask"

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        from transformers import BertConfig, BertForMaskedLM

        from zoo.tokenizers import ENCODER_SPECIALS

        config = BertConfig(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_positions,
            tie_word_embeddings=tie_word_embeddings and self.tied,
            pad_token_id=ENCODER_SPECIALS.index("[PAD]"),  # the tokenizer's id
            attn_implementation="sdpa",  # type: ignore[call-arg]  # accepted by PretrainedConfig(**kwargs)
        )
        return BertForMaskedLM(config)

    @classmethod
    def selected_body(
        cls,
        model: PreTrainedModel,
        input_ids: Tensor,
        attention_mask: Tensor | None,
        selected: Tensor,
    ) -> Tensor:
        """Last hidden state at the selected positions, [K, D]: the last layer computes keys and
        values for every position but queries, attention output and feed-forward only at the
        selected ones (MLM reads nothing else). Same values as `body(...)[selected]`; at 15%
        masking a 4-layer encoder does about 17% fewer FLOPs."""
        from torch import Tensor
        from transformers.masking_utils import create_bidirectional_mask
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        from transformers.models.bert.modeling_bert import eager_attention_forward

        bert = _checked(model).bert
        x = bert.embeddings(input_ids=input_ids)  # (B, T, D)
        mask = create_bidirectional_mask(
            config=bert.config, inputs_embeds=x, attention_mask=attention_mask
        )  # None, or (B, 1, T, T) in the attention implementation's format
        if mask is not None and not isinstance(mask, Tensor):  # e.g. flex attention's BlockMask
            return cls.body(model, input_ids, attention_mask)[selected]
        *layers, last = cast("list[BertLayer]", list(bert.encoder.layer))
        for layer in layers:
            x = layer(x, mask)
        idx, valid = _padded_positions(selected)  # (B, m), (B, m)
        b, t, d = x.shape
        xq = x.gather(1, idx[..., None].expand(b, idx.shape[1], d))  # (B, m, D)
        sa = cast("BertSelfAttention", last.attention.self)
        heads, hd = sa.num_attention_heads, sa.attention_head_size
        q = sa.query(xq).view(b, -1, heads, hd).transpose(1, 2)  # (B, H, m, d)
        k = sa.key(x).view(b, t, heads, hd).transpose(1, 2)  # (B, H, T, d)
        v = sa.value(x).view(b, t, heads, hd).transpose(1, 2)
        if mask is not None:  # keep the selected query rows
            rows = idx[:, None, :, None].expand(b, mask.shape[1], idx.shape[1], mask.shape[-1])
            mask = mask.gather(2, rows)  # (B, 1, m, T)
        attend = ALL_ATTENTION_FUNCTIONS.get_interface(
            bert.config._attn_implementation, eager_attention_forward
        )
        a, _ = attend(
            sa, q, k, v, mask, dropout=sa.dropout.p if sa.training else 0.0, scaling=sa.scaling
        )  # (B, m, H, d)
        a = last.attention.output(a.reshape(b, -1, heads * hd), xq)  # (B, m, D)
        out = last.output(last.intermediate(a), a)  # (B, m, D)
        return out[valid]  # (K, D), same order as x[selected]

    @staticmethod
    def vocab_head(model: PreTrainedModel) -> VocabHead:
        from zoo.objectives.base import VocabHead

        pred = _checked(model).cls.predictions
        return VocabHead(transform=pred.transform, weight=pred.decoder.weight, bias=pred.bias)

    @classmethod
    def shard_units(cls, model: PreTrainedModel) -> list[nn.Module]:
        """Every block but the last: `selected_body` calls into the last one's sub-modules,
        past its forward (where FSDP would gather it), so it stays in the root unit."""
        last = _checked(model).bert.encoder.layer[-1]
        return [m for m in super().shard_units(model) if m is not last]

    @staticmethod
    def head_only_modules(model: PreTrainedModel) -> list[nn.Module]:
        return [_checked(model).cls.predictions.transform]


def _checked(model: PreTrainedModel) -> BertForMaskedLM:
    """`model` as the BertForMaskedLM it must be (this family builds and loads no other)."""
    from transformers import BertForMaskedLM

    if not isinstance(model, BertForMaskedLM):
        raise TypeError(f"a bert spec was handed a {type(model).__name__}, not a BertForMaskedLM")
    return model


def _padded_positions(selected: Tensor) -> tuple[Tensor, Tensor]:
    """selected (Tensor): [B, T] bool -> the selected positions of each row, in order, padded
    to the longest row (idx [B, m]), and which entries are real (valid [B, m])."""
    import torch

    counts = selected.sum(1)  # (B,)
    m = padded_row_count(selected)
    order = torch.sort(selected.to(torch.int8), dim=1, descending=True, stable=True).indices
    idx = order[:, :m]  # selected positions first, in position order
    valid = torch.arange(m, device=selected.device)[None, :] < counts[:, None]
    return idx, valid


def _bert(
    name: str, layers: int, hidden: int, heads: int, vocab_size: int, recipe: Recipe
) -> BertSpec:
    return BertSpec(
        name=name,
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        intermediate_size=4 * hidden,
        max_positions=512,
        recipe=recipe,
    )


@PRESETS.register("bert-tiny")
def bert_tiny(vocab_size: int = 4096) -> BertSpec:
    """CPU-test scale: L2 H128 A2 (google/bert_uncased_L-2_H-128_A-2 shape)."""
    recipe = Recipe(
        lr=1e-3, weight_decay=0.01, warmup_steps=20, steps=200, seq_len=128, batch_size=16
    )
    return _bert("bert-tiny", 2, 128, 2, vocab_size, recipe)


@PRESETS.register("bert-mini")
def bert_mini(vocab_size: int = 30522) -> BertSpec:
    """L4 H256 A4 (google/bert_uncased_L-4_H-256_A-4, BERT-Mini of Turc et al. 2019: 11.3M
    parameters at the 30522 vocabulary); the small models' recipe of Appendix D.4."""
    recipe = Recipe(lr=2e-4, weight_decay=0.01, warmup_steps=10_000, steps=400_000, batch_size=64)
    return _bert("bert-mini", 4, 256, 4, vocab_size, recipe)


@PRESETS.register("bert-small")
def bert_small(vocab_size: int = 30522) -> BertSpec:
    """L4 H512 A8 (google/bert_uncased_L-4_H-512_A-8), paper Appendix D.4 recipe."""
    recipe = Recipe(lr=2e-4, weight_decay=0.01, warmup_steps=10_000, steps=400_000, batch_size=64)
    return _bert("bert-small", 4, 512, 8, vocab_size, recipe)


@PRESETS.register("bert-medium")
def bert_medium(vocab_size: int = 30522) -> BertSpec:
    """L8 H512 A8 (google/bert_uncased_L-8_H-512_A-8, BERT-Medium of Turc et al. 2019: 41.7M
    parameters at the 30522 vocabulary); the small models' recipe of Appendix D.4."""
    recipe = Recipe(lr=2e-4, weight_decay=0.01, warmup_steps=10_000, steps=400_000, batch_size=64)
    return _bert("bert-medium", 8, 512, 8, vocab_size, recipe)


@PRESETS.register("bert-base")
def bert_base(vocab_size: int = 50304) -> BertSpec:
    """bert-base-uncased shape with the Pythia 50k vocabulary, paper Appendix D.1 recipe
    (Table 7: batch 256 vanilla / 512 headless)."""
    recipe = Recipe(
        lr=1e-4,
        weight_decay=0.01,
        warmup_steps=10_000,
        steps=1_000_000,
        batch_size=256,
        headless=(("batch_size", 512),),
    )
    return _bert("bert-base", 12, 768, 12, vocab_size, recipe)


@PRESETS.register("distilbert-multilingual")
def distilbert_multilingual(vocab_size: int = 119547) -> BertSpec:
    """6 layers, hidden 768 (distilbert-base-multilingual-cased shape), Appendix D.3 recipe."""
    recipe = Recipe(lr=2e-4, weight_decay=0.01, warmup_steps=10_000, steps=400_000, batch_size=64)
    return _bert("distilbert-multilingual", 6, 768, 12, vocab_size, recipe)
