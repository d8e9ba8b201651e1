"""headless-zoo harness: declarative YAML suites, idempotent runs, Parquet leaderboards, plots.

Imports `zoo`; `zoo` never imports it.
"""
