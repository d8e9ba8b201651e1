"""Fixtures the reliability tests share with the harness tests (tiny decoder checkpoints)."""

from tests.harness.conftest import tiny_decoder, tiny_headless_decoder

__all__ = ["tiny_decoder", "tiny_headless_decoder"]
