"""Fixtures the reliability tests share with the harness tests (a tiny decoder checkpoint)."""

from tests.harness.conftest import tiny_decoder

__all__ = ["tiny_decoder"]
