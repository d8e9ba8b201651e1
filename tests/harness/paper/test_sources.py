"""Where our side of each paper figure comes from: the unit each comparison replicates."""

from __future__ import annotations

from harness.results.metrics import metric_info
from tests.harness.paper.rows import PAPER, source_of


def test_a_speed_or_memory_figure_is_measured_and_every_other_is_by_pretraining_seed() -> None:
    """The unit follows the metric (`Metric.replicate`), never the task's name: a throughput
    cell pretrains nothing, so its seed is one side-by-side measurement."""
    units = {f.key: (source_of(f).metric, source_of(f).unit) for f in PAPER}
    measured = {k for k, (_, unit) in units.items() if unit == "measurement"}
    assert measured == {
        k for k, (metric, _) in units.items() if metric_info(metric).replicate == "measurements"
    }
    assert {units[k][0] for k in measured} == {"speedup_vs_baseline", "memory_vs_baseline"}
    assert len(measured) == 6  # Table 6's three, Figure 2's two, Figure 6's speed
    assert all(unit == "seed" for k, (_, unit) in units.items() if k not in measured)
