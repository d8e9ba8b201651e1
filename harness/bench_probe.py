"""Fresh-process memory probe for `hlm bench`: `python -m harness.bench_probe KIND JSON`.

Prints one JSON line: the RSS high-water mark during the measured work (`peak_mb`, VmHWM
reset just before it) and its growth over the RSS just before (`growth_mb`). The `speedup`
probe instead times hf-default against the headless step in this fresh process, both with
torch's own dropout, so that they can be compared with torch's stock runtime (the caller sets
THP_MEM_ALLOC_ENABLE=0 for its default allocator).
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
    elif kind == "speedup":  # hf-default vs headless-sparse, timed in this process's settings
        from harness.bench_timing import interleaved
        from harness.memory import torch_huge_pages
        from harness.tasks.throughput import Stepper
        from zoo.models import get_spec

        spec = get_spec(args["preset"], args["vocab"])
        b, t = args["batch"], args["seq"]
        steppers = {
            "hf-default": Stepper(spec, "ce", b, t, 0, hf_default=True, fast_dropout=False),
            "headless-sparse": Stepper(spec, "cwt", b, t, 0, sparse=True, fast_dropout=False),
        }
        timing = interleaved({k: s.step for k, s in steppers.items()}, 1, args["reps"])
        best = timing.best
        print(
            json.dumps(
                {
                    "speedup": best["hf-default"] / best["headless-sparse"],
                    "huge_pages": torch_huge_pages(),
                }
            )
        )
        return
    else:
        raise SystemExit(f"unknown probe {kind!r}")
    peak = peak_mb()
    print(json.dumps({"peak_mb": peak, "before_mb": before, "growth_mb": peak - before}))


if __name__ == "__main__":
    main()
