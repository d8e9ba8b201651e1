"""Corpora, tokenizers, token caches and packed blocks with MLM or CLM labels."""
