"""Fresh-process memory probe for `hlm bench`: `python -m harness.bench_probe KIND JSON`.

Prints one JSON line: the RSS high-water mark during the measured work (`peak_mb`, VmHWM
reset just before it) and its growth over the RSS just before (`growth_mb`).
"""

from __future__ import annotations

import json
import sys

from harness.memory import peak_mb, reset_peak, rss_mb


def main() -> None:
    kind, args = sys.argv[1], json.loads(sys.argv[2])
    import torch

    torch.set_flush_denormal(True)
    if kind == "cwt":
        from zoo.objectives import cwt_loss

        h = torch.randn(args["k"], args["d"]).requires_grad_()  # LayerNorm-scale outputs
        e = (0.05 * torch.randn(args["k"], args["d"])).requires_grad_()  # embedding-scale targets
        before = rss_mb()
        reset_peak()
        cwt_loss(h, e, impl=args["impl"]).backward()
    elif kind == "step":
        from harness.tasks.throughput import Stepper
        from zoo.models import get_spec

        s = Stepper(
            get_spec(args["preset"], args["vocab"]),
            args["objective"],
            args["batch"],
            args["seq"],
            0,
            hf_default=bool(args.get("hf_default")),
        )
        before = rss_mb()
        reset_peak()
        s.step()
        s.step()
    else:
        raise SystemExit(f"unknown probe {kind!r}")
    peak = peak_mb()
    print(json.dumps({"peak_mb": peak, "before_mb": before, "growth_mb": peak - before}))


if __name__ == "__main__":
    main()
