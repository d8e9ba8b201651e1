"""The training step: body once, select K positions, hand the objective only what it declared.

`TrainModule` is an `nn.Module` so that DistributedDataParallel wraps the whole step (body and
loss) and gradient synchronisation sees every parameter the objective used.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from transformers import PreTrainedModel

from zoo.data.batches import IGNORE
from zoo.errors import UserError
from zoo.models.spec import ModelSpec, padded_row_count
from zoo.objectives.base import LossInputs
from zoo.objectives.declared import Objective, ObjectiveOptions, plain_loss


def prepare_for_objective(
    model: PreTrainedModel, spec: type[ModelSpec] | ModelSpec, objective: Objective
) -> None:
    """Freeze what the objective never uses (the vocabulary head of a headless objective),
    and check that the model has what it needs (an untied output matrix for NCE)."""
    if objective.needs_output_embeddings and (
        spec.output_embeddings(model) is spec.input_embeddings(model).weight
    ):
        raise UserError(
            f"objective {objective.name!r} needs a separate (untied) output embedding matrix; "
            "build the model with tie_word_embeddings=False"
        )
    if objective.headless:
        for module in spec.head_only_modules(model):
            module.requires_grad_(False)
        head = spec.vocab_head(model)
        if head.bias is not None:
            head.bias.requires_grad_(False)
        out = spec.output_embeddings(model)
        untied = out is not spec.input_embeddings(model).weight
        if untied and not objective.needs_output_embeddings:  # a head no headless loss reads
            out.requires_grad_(False)


def head_from_embeddings(
    model: PreTrainedModel, spec: type[ModelSpec] | ModelSpec, objective: Objective
) -> None:
    """Before a headless model is saved: an untied head that no loss trained becomes a copy
    of the input embeddings, so that the checkpoint's LM head is the paper's "headless"
    evaluation head (e_theta^T), as it is for a tied model."""
    if not objective.headless or objective.needs_output_embeddings:
        return
    out, emb = spec.output_embeddings(model), spec.input_embeddings(model).weight
    if out is not emb:
        with torch.no_grad():
            out.copy_(emb)


def last_layer_queries(
    spec: type[ModelSpec] | ModelSpec, selected: Tensor, prune_last_layer: bool
) -> int | None:
    """Query rows of an encoder's pruned last layer (`selected_body` pads every row to the
    longest row's count): B x max count, or None where the full layer runs. For FLOP counts.

    selected (Tensor): [B, T] bool, the positions the loss reads.
    """
    if not (prune_last_layer and spec.kind == "encoder"):
        return None
    return queries_of(spec, selected.shape[0], padded_row_count(selected), prune_last_layer)


def queries_of(
    spec: type[ModelSpec] | ModelSpec, batch_size: int, longest_row: int, prune_last_layer: bool
) -> int | None:
    """`last_layer_queries` from counts already on the host: the longest row's count of
    selected positions (at least 1 row is computed)."""
    if not (prune_last_layer and spec.kind == "encoder"):
        return None
    return batch_size * max(longest_row, 1)


class TrainModule(nn.Module):
    """forward(input_ids [B, T], labels [B, T]) -> dict of scalar losses (+ "k": #selected).

    `prune_last_layer`: take the hidden states from `spec.selected_body`, which may compute
    the last layer only where a label is (encoders); same values as the full body.
    """

    def __init__(
        self,
        model: PreTrainedModel,
        spec: type[ModelSpec] | ModelSpec,
        objective: Objective,
        options: ObjectiveOptions,
        prune_last_layer: bool = True,
    ) -> None:
        super().__init__()
        self.model = model
        self.spec = spec
        self.objective = objective
        self.loss_fn = plain_loss(objective.loss)  # resolved outside the compiled forward
        self.options = options
        self.prune_last_layer = prune_last_layer
        self._options_of: dict[str, ObjectiveOptions] = {objective.name: options}

    def forward(
        self,
        input_ids: Tensor,
        labels: Tensor,
        attention_mask: Tensor | None = None,
        objective: Objective | None = None,
    ) -> dict[str, Tensor]:
        """`objective`: another objective's loss through the same module (evaluation's CE
        through the head), with the options it shares with this module's
        (`Objective.options_from`)."""
        selected = labels != IGNORE  # (B, T)
        if self.prune_last_layer:  # the family may skip the last layer's unselected positions
            h = self.spec.selected_body(self.model, input_ids, attention_mask, selected)  # (K, D)
        else:
            h = self.spec.body(self.model, input_ids, attention_mask)[selected]  # (K, D)
        targets = labels[selected]  # (K,)
        obj = objective or self.objective
        batch = LossInputs(
            hidden=h,
            targets=targets,
            input_embeddings=self.spec.input_embeddings(self.model),
            head=self.spec.vocab_head(self.model) if obj.needs_head else None,
            output_embeddings=self.spec.output_embeddings(self.model)
            if obj.needs_output_embeddings
            else None,
        )
        if obj.name not in self._options_of:  # another objective's: once, outside any step
            self._options_of[obj.name] = obj.options_from(self.options)
        loss_fn = self.loss_fn if objective is None else plain_loss(obj.loss)
        out = loss_fn(batch, self._options_of[obj.name])
        if "loss" not in out:
            raise RuntimeError(f"objective {obj.name!r} returned no 'loss' entry")
        return out
