"""The fresh-process memory probe: `python -m harness.bench.probe KIND JSON`.

`probe(kind, ...)` runs it and returns its JSON line: the RSS high-water mark during the
measured work (`peak_mb`, VmHWM reset just before it) and its growth over the RSS just before
(`growth_mb`), which leaves out the interpreter and the model's own weights. Kinds:

- ``cwt``: one CWT loss forward + backward (k, d, impl);
- ``step``: `steps` training steps of a `Variant` (preset, vocab, batch, seq, variant);
- ``speedup``: hf-default against the headless step timed in this fresh process, both with
  torch's own dropout (the caller sets THP_MEM_ALLOC_ENABLE=0 for torch's default allocator).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from harness.bench.memory import peak_mb, reset_peak, rss_mb
from zoo.errors import UserError


def probe(
    kind: str, env: dict[str, str] | None = None, plugins: Sequence[str] = (), **kwargs: Any
) -> dict[str, Any]:
    """Run the probe in a fresh process (which imports `plugins` first, so that a plugin
    objective is known there too) and return its JSON result; a failure is a UserError
    with the process's last line of error output."""
    args = json.dumps({**kwargs, "plugins": list(plugins)}, default=_json)
    out = subprocess.run(
        [sys.executable, "-m", "harness.bench.probe", kind, args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no error output"])[-1]
        raise UserError(f"memory probe ({kind}) failed with status {out.returncode}: {last}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _json(obj: Any) -> Any:
    if hasattr(obj, "as_json"):  # a benchmark `Variant`
        return obj.as_json()
    raise TypeError(f"cannot send {type(obj).__name__} to the probe")


def _speedup(args: dict[str, Any]) -> dict[str, Any]:
    from harness.bench.memory import torch_huge_pages
    from harness.bench.stepper import Stepper, variant
    from harness.bench.timing import interleaved
    from zoo.models import get_spec

    spec = get_spec(args["preset"], args["vocab"])
    b, t = args["batch"], args["seq"]
    steppers = {
        "hf-default": Stepper(spec, variant("ce", hf_default=True, fast_dropout=False), b, t),
        "headless-sparse": Stepper(
            spec, variant("cwt", sparse_embeddings=True, fast_dropout=False), b, t
        ),
    }
    best = interleaved({k: s.step for k, s in steppers.items()}, 1, args["reps"]).best
    return {
        "speedup": best["hf-default"] / best["headless-sparse"],
        "huge_pages": torch_huge_pages(),
    }


def main() -> None:
    kind, args = sys.argv[1], json.loads(sys.argv[2])
    import torch

    from zoo.registry import load_plugin

    for plugin in args["plugins"]:  # the parent process's, which decided their trust
        load_plugin(plugin, trusted=True)
    torch.set_flush_denormal(True)
    if kind == "speedup":
        print(json.dumps(_speedup(args)))
        return
    if kind == "cwt":
        from zoo.objectives import cwt_loss

        h = torch.randn(args["k"], args["d"]).requires_grad_()  # LayerNorm-scale outputs
        e = (0.05 * torch.randn(args["k"], args["d"])).requires_grad_()  # embedding-scale targets
        before = rss_mb()
        reset_peak()
        cwt_loss(h, e, impl=args["impl"]).backward()
    elif kind == "step":
        from harness.bench.stepper import Stepper, Variant
        from zoo.models import get_spec

        s = Stepper(
            get_spec(args["preset"], args["vocab"]),
            Variant.from_json(args["variant"]),
            args["batch"],
            args["seq"],
        )
        before = rss_mb()
        reset_peak()
        for _ in range(args["steps"]):
            s.step()
    else:
        raise SystemExit(f"unknown probe {kind!r}")
    peak = peak_mb()
    print(json.dumps({"peak_mb": peak, "before_mb": before, "growth_mb": peak - before}))


if __name__ == "__main__":
    main()
