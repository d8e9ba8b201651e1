"""Pretraining: the typed run config, identity, setup stages, the loop, checkpoints, resume."""
