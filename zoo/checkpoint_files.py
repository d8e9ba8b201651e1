"""The files of a checkpoint folder someone may have sent, read strictly before transformers
acts on them (`zoo.reader` bounds each file; here each field is typed and range-checked).

    check_model_config(folder); check_tokenizer_files(folder); check_weights(folder)

Transformers trusts `config.json`: `num_attention_heads: 0` divides by zero, `hidden_size:
"64"` fails deep in a layer, `num_hidden_layers: 1000000` builds for minutes before it fails.
The shapes here are checked, and the model's size estimated, before any model is built. The
tokenizer's files likewise: a vocabulary of one entry, a token id past any vocabulary, a
`model_max_length` that is no number.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from zoo.errors import UserError
from zoo.reader import check_regular, open_regular, parse_json, read_model
from zoo.train.limits import MAX_POSITIONS, MAX_VOCAB

MAX_LAYERS = 1024
MAX_WIDTH = 2**16
MAX_PARAMETERS = 2 * 10**11  # past the largest open models: a config that says more lies

# each dimension under the names the model families give it
ALIASES = {
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_attention_heads": ("num_attention_heads", "n_head"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions"),
}


class ModelShape(BaseModel):
    """The dimensions of a `config.json` that size a model (others pass as they are)."""

    model_config = ConfigDict(extra="allow")

    vocab_size: StrictInt = Field(ge=2, le=MAX_VOCAB)
    hidden_size: StrictInt = Field(ge=1, le=MAX_WIDTH)
    num_attention_heads: StrictInt = Field(ge=1, le=MAX_WIDTH)
    num_hidden_layers: StrictInt = Field(ge=1, le=MAX_LAYERS)
    max_position_embeddings: StrictInt | None = Field(None, ge=8, le=MAX_POSITIONS)
    intermediate_size: StrictInt | None = Field(None, ge=1, le=MAX_WIDTH * 16)
    bos_token_id: StrictInt | None = Field(None, ge=0)
    eos_token_id: StrictInt | list[StrictInt] | None = None
    pad_token_id: StrictInt | None = Field(None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _one_name_each(cls, data: Any) -> Any:
        """A family's own names (`n_embd`) read as the common ones."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name, spellings in ALIASES.items():
            given = [s for s in spellings if s in data and data[s] is not None]
            if given and name not in out:
                out[name] = data[given[0]]
        return out

    @field_validator("bos_token_id", "pad_token_id")
    @classmethod
    def _an_id_of_the_vocabulary(cls, v: int | None, info: Any) -> int | None:
        if v is not None and "vocab_size" in info.data and v >= info.data["vocab_size"]:
            raise ValueError(f"token id {v} is past the vocabulary of {info.data['vocab_size']}")
        return v

    @model_validator(mode="after")
    def _heads_divide_and_size_is_sane(self) -> ModelShape:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} is not a multiple of num_attention_heads "
                f"{self.num_attention_heads}"
            )
        inner = self.intermediate_size or 4 * self.hidden_size
        params = self.num_hidden_layers * (4 * self.hidden_size**2 + 2 * self.hidden_size * inner)
        params += self.vocab_size * self.hidden_size
        if params > MAX_PARAMETERS:
            raise ValueError(f"about {params:.3g} parameters, more than {MAX_PARAMETERS:.0e}")
        return self


class AddedToken(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: StrictInt = Field(ge=0, lt=MAX_VOCAB)
    content: str


class TokenizerModel(BaseModel):
    model_config = ConfigDict(extra="allow")

    vocab: dict[str, StrictInt] | list[Any] | None = None

    @field_validator("vocab")
    @classmethod
    def _ids_in_range(
        cls, v: dict[str, int] | list[Any] | None
    ) -> dict[str, int] | list[Any] | None:
        if v is None:
            return v
        if len(v) < 2:
            raise ValueError(f"a vocabulary of {len(v)} entries; a tokenizer needs at least 2")
        if isinstance(v, dict) and max(v.values()) >= MAX_VOCAB:
            raise ValueError(f"token id {max(v.values())} is past any vocabulary ({MAX_VOCAB})")
        return v


class TokenizerFile(BaseModel):
    """`tokenizer.json`: its added tokens and its model's vocabulary."""

    model_config = ConfigDict(extra="allow")

    added_tokens: list[AddedToken]
    model: TokenizerModel

    def highest_id(self) -> int | None:
        """The largest id it can give: its vocabulary's and its added tokens'."""
        vocab = self.model.vocab
        ids = [t.id for t in self.added_tokens]
        if isinstance(vocab, dict):
            ids += list(vocab.values())
        elif isinstance(vocab, list):
            ids.append(len(vocab) - 1)
        return max(ids, default=None)


class TokenizerSettings(BaseModel):
    """`tokenizer_config.json`: the settings transformers reads as numbers."""

    model_config = ConfigDict(extra="allow")

    model_max_length: float | None = Field(None, gt=0, strict=True)


def check_model_config(folder: Path) -> ModelShape | None:
    """The `config.json` of a local checkpoint folder, typed; None where there is none."""
    f = folder / "config.json"
    return read_model(f, ModelShape, "a model's config") if os.path.lexists(f) else None


def check_tokenizer_files(folder: Path) -> TokenizerFile | None:
    """The tokenizer files of a local folder, where present, typed; its `tokenizer.json`."""
    tokenizer = None
    if os.path.lexists(folder / "tokenizer.json"):
        tokenizer = read_model(folder / "tokenizer.json", TokenizerFile, "a tokenizer")
    if os.path.lexists(folder / "tokenizer_config.json"):
        read_model(folder / "tokenizer_config.json", TokenizerSettings, "a tokenizer's settings")
    return tokenizer


def check_tokenizer_fits(folder: Path) -> None:
    """A checkpoint's tokenizer gives no id past its model's embeddings (a tokenizer of
    another model, or one edited, would index past them: an IndexError deep in a forward)."""
    shape = check_model_config(folder)
    tokenizer = check_tokenizer_files(folder)
    if shape is None or tokenizer is None:
        return
    highest = tokenizer.highest_id()
    if highest is not None and highest >= shape.vocab_size:
        raise UserError(
            f"{folder / 'tokenizer.json'}: token id {highest} is past the model's "
            f"{shape.vocab_size} embeddings (config.json vocab_size): the tokenizer of another "
            "model, or an edited one"
        )


MAX_HEADER = 100 * 2**20  # safetensors' own bound on a header


def check_weights_file(path: Path) -> dict[str, Any]:
    """A `.safetensors` file's header, checked against the file before any reader maps it: a
    regular file (not a link to a device), a header length the file holds, tensor extents
    inside the data; the header's tensors by name."""
    st = check_regular(path, "weights")
    with open_regular(path, "weights", max_bytes=None) as f:
        head = f.read(8)
        size = int.from_bytes(head, "little") if len(head) == 8 else -1
        if not 0 < size <= min(MAX_HEADER, st.st_size - 8):
            raise UserError(f"{path}: a header of {size} bytes in a file of {st.st_size}: damaged")
        header = parse_json(f.read(size).decode("utf-8", "replace"), str(path))
    if not isinstance(header, dict):
        raise UserError(f"{path}: the header is not a JSON object: damaged")
    data = st.st_size - 8 - size
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    for name, entry in tensors.items():
        offsets = (
            entry["data_offsets"] if isinstance(entry, dict) and "data_offsets" in entry else None
        )
        if not (isinstance(offsets, list) and len(offsets) == 2) or not (
            0 <= offsets[0] <= offsets[1] <= data
        ):
            raise UserError(f"{path}: tensor {name} lies outside the file's data: damaged")
    return tensors


def check_weights(folder: Path) -> None:
    """Every `.safetensors` file of a local checkpoint: its header (`check_weights_file`),
    then every tensor finite (a NaN model scored "acc 1" on a multiple-choice task)."""
    from safetensors import safe_open

    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise UserError(f"{folder}: no .safetensors weights (the only weights read here)")
    for path in files:
        check_weights_file(path)
        try:
            with safe_open(str(path), framework="pt") as f:
                for name in f.keys():  # noqa: SIM118  (a safe_open handle, not a dict)
                    tensor = f.get_tensor(name)
                    if tensor.is_floating_point() and not bool(tensor.isfinite().all()):
                        raise UserError(f"{path}: tensor {name} holds NaN or infinite values")
        except UserError:
            raise
        except Exception as exc:  # the reader's own refusal of a damaged file
            raise UserError(f"{path}: does not read as safetensors ({exc})") from None
