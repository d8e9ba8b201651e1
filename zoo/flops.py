"""Analytic FLOP counts (multiply-add = 2 FLOPs), forward and training (= 3 x forward).

Per token of the body: 2 x (non-embedding matmul parameters, from the family's own block
description: `ModelSpec.layer_params`, with its key / value heads and feed-forward matrices)
+ 4 x T x D per layer (QK^T and attention x V). With the encoder's last layer pruned to Q
query rows (`last_layer_queries`), that layer computes keys and values for every token but
the rest only for the Q rows. The loss term for K selected positions is the objective's own
declared cost (`Objective.flops`): CE 2 K D V (+ 2 K D^2 for BERT's head transform);
CWT / NCE 2 K^2 D; CE+CWT both.
"""

from __future__ import annotations

from zoo.models.spec import ModelSpec
from zoo.objectives.declared import LossShape, Objective


def body_forward_flops(
    spec: ModelSpec, batch_size: int, seq_len: int, last_layer_queries: int | None = None
) -> float:
    tokens, d = batch_size * seq_len, spec.hidden_size
    per_token = 2 * spec.layer_params() + 4 * seq_len * d  # one layer, one token
    if last_layer_queries is None:
        return float(tokens * per_token * spec.num_layers)
    kv = 2 * (2 * d * spec.kv_size)  # the pruned layer's keys and values, for every token
    last = tokens * kv + last_layer_queries * (per_token - kv)
    return float(tokens * per_token * (spec.num_layers - 1) + last)


def loss_forward_flops(spec: ModelSpec, objective: Objective, k: int) -> float:
    shape = LossShape(k, spec.hidden_size, spec.vocab_size, head_transform=spec.is_encoder)
    return objective.flops(shape)


def train_step_flops(
    spec: ModelSpec,
    objective: Objective,
    batch_size: int,
    seq_len: int,
    k: int,
    last_layer_queries: int | None = None,
) -> float:
    """FLOPs of one optimisation step over one micro-batch (forward + backward)."""
    body = body_forward_flops(spec, batch_size, seq_len, last_layer_queries)
    return 3.0 * (body + loss_forward_flops(spec, objective, k))


def expected_k(spec: ModelSpec, batch_size: int, seq_len: int, mlm_probability: float) -> int:
    """Selected positions per micro-batch: masked tokens (encoder) or next-token positions."""
    if spec.is_encoder:
        return max(1, round(batch_size * (seq_len - 2) * mlm_probability))
    return batch_size * (seq_len - 1)
