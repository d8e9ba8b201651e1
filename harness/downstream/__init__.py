"""Downstream evaluation: task data (hub ids and local files), metrics, encoder fine-tuning."""
