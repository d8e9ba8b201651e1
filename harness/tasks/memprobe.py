"""Fresh-process memory probe: `python -m harness.tasks.memprobe '{"preset": ..., ...}'`.

Builds the model, records RSS, runs the training steps, prints one JSON line with the RSS
high-water mark (`peak_rss_mb`) and its growth during the steps (`step_growth_mb`).
"""

from __future__ import annotations

import json
import resource
import sys


def _rss_now_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    args = json.loads(sys.argv[1])
    from harness.tasks.throughput import Stepper
    from zoo.models import get_spec

    spec = get_spec(args["preset"], args["vocab_size"])
    stepper = Stepper(spec, args["objective"], args["batch"], args["seq"], seed=0)
    before = _rss_now_mb()
    for _ in range(args["steps"]):
        stepper.step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(
        json.dumps(
            {"peak_rss_mb": peak, "rss_before_steps_mb": before, "step_growth_mb": peak - before}
        )
    )


if __name__ == "__main__":
    main()
