"""headless-zoo: pretrain headless (Contrastive Weight Tying) language models and their
classical twins.

`zoo` is the library: objectives, model presets, tokenizers, data, pretraining and causal
fine-tuning. It never imports `harness` (suites, leaderboards, the CLI live there).
"""

__version__ = "0.1.0"
