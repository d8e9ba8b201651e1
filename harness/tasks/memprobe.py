"""Fresh-process memory probe: `python -m harness.tasks.memprobe '{"preset": ..., ...}'`.

Builds the model, records RSS, resets the high-water mark, runs the training steps, prints one
JSON line with the peak RSS during the steps (`peak_rss_mb`) and its growth over the RSS before
them (`step_growth_mb`). See harness/memory.py for why ru_maxrss is not used.
"""

from __future__ import annotations

import json
import sys

from harness.memory import peak_mb, reset_peak, rss_mb


def main() -> None:
    args = json.loads(sys.argv[1])
    import torch

    from harness.tasks.throughput import Stepper
    from zoo.models import get_spec

    torch.set_flush_denormal(True)
    spec = get_spec(args["preset"], args["vocab_size"])
    stepper = Stepper(spec, args["objective"], args["batch"], args["seq"], seed=0)
    before = rss_mb()
    reset_peak()
    for _ in range(args["steps"]):
        stepper.step()
    peak = peak_mb()
    print(
        json.dumps(
            {"peak_rss_mb": peak, "rss_before_steps_mb": before, "step_growth_mb": peak - before}
        )
    )


if __name__ == "__main__":
    main()
