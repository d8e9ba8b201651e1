"""The sizes at which the paper's figures are compared: one `Scale` each, in `SCALES`.

The CPU scale is `harness.paper.sources` itself (the `paper-cpu-*` suites); every other scale
maps each CPU part to its own suite and each CPU preset to its own, keeping the CPU part's
tasks, metrics and sanity bars: `CPU, English Wikipedia` (bert-mini and gpt2-11m on this
machine), `GPU` (bert-small and pythia-70m) and `GPU, bert-medium`. A speed depends on the
machine, so `CPU, AMD EPYC` measures the CPU suites' speeds and memory again on a second kind
of machine, into `leaderboards/amd-epyc/` (`hlm run SUITE --task throughput --leaderboards
leaderboards/amd-epyc`), beside the CPU scale's rows from the first. `hlm report --paper` gives
each a section, and a tally and a headline sentence once its leaderboards are committed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.paper.figures import PaperFigure
from harness.paper.sources import DECODER, ENCODER, Source, source_of


@dataclass(frozen=True)
class Scale:
    """A size at which the paper's figures are compared: `suites` maps each CPU part to this
    scale's (a part it lacks: those figures are not compared at this scale), `models` each
    CPU preset to this scale's; tasks, metrics and sanity bars stay the CPU part's. `pending`:
    what the report says of its suites while no figure has rows for both its arms. `machine`:
    the kind of machine (as its rows' `hardware` names it) on which a scale measures the CPU
    suites' speed and memory again, into its own folder of the leaderboards; it compares those
    figures only (`Source.unit` "measurement": nothing is pretrained)."""

    name: str
    suites: dict[str, str]
    models: dict[str, str]
    pending: str = ""
    speed_suite: str = ""  # the suite measuring this scale's speeds side by side, where not mapped
    machine: str = ""

    def source(self, fig: PaperFigure) -> Source | None:
        """Our source of `fig` at this scale, or None where this scale does not compare it."""
        cpu = source_of(fig)
        if not self.suites:
            return cpu
        if cpu.suite not in self.suites or (self.machine and cpu.unit != "measurement"):
            return None
        if self.machine:
            return replace(cpu, suite=self.suites[cpu.suite], machine=self.machine)
        roles = {r: self._model(m) for r, m in cpu.roles.items()}
        speed = None
        if cpu.speed is not None:
            measured = (
                self.suites[cpu.speed[0]] if cpu.speed[0] in self.suites else self.speed_suite
            )
            speed = (measured, self._model(cpu.speed[1])) if measured else None
        return replace(cpu, suite=self.suites[cpu.suite], roles=roles, speed=speed)

    def _model(self, label: str) -> str:
        preset = next(p for p in self.models if label.startswith(f"{p}-"))
        return self.models[preset] + label.removeprefix(preset)


CPU = Scale("CPU", {}, {})
# the encoder and decoder comparisons on a CUDA GPU (suites/paper-gpu-*.yaml): two steps of the
# compact-BERT ladder for the encoders (one scale each), a 70M-class decoder
GPU_PENDING = (
    "These suites repeat the encoder comparisons (Table 1, Figure 3, "
    "Appendix A) with bert-small and bert-medium and the decoder ones (Tables 3-4, Appendix A) "
    "with pythia-70m, on English Wikipedia, at about 100M tokens a run; they need a CUDA GPU "
    "(`tools/gpu-run.sh`). Run them on one and regenerate this page: their rows say which GPU "
    "trained them."
)
GPU = Scale(
    "GPU",
    {ENCODER: "paper-gpu-encoder", DECODER: "paper-gpu-decoder"},
    {"bert-tiny": "bert-small", "pythia-tiny": "pythia-70m"},
    pending=GPU_PENDING,
    speed_suite="paper-gpu-encoder",
)
GPU_MEDIUM = Scale(
    "GPU, bert-medium",
    {ENCODER: "paper-gpu-encoder"},
    {"bert-tiny": "bert-medium"},
    pending=GPU_PENDING,
    speed_suite="paper-gpu-encoder",
)
# the same comparisons a size up on this machine's CPU, on English Wikipedia
# (suites/paper-cpu-wiki-*.yaml): bert-mini encoders, gpt2-11m decoders
WIKI = Scale(
    "CPU, English Wikipedia",
    {ENCODER: "paper-cpu-wiki-encoder", DECODER: "paper-cpu-wiki-decoder"},
    {"bert-tiny": "bert-mini", "pythia-tiny": "gpt2-11m"},
    pending="These suites repeat the encoder comparisons (Table 1, "
    "Figure 3, Appendix A) with bert-mini and the decoder ones (Tables 3-4, Appendix A) with "
    "gpt2-11m, pretrained on English Wikipedia with a held-out file for validation, sized from "
    "a CPU pilot so that a cell takes at most two hours; run them (`hlm run "
    "paper-cpu-wiki-encoder`, a cell at a time in the background) and regenerate this page.",
    speed_suite="paper-cpu-wiki-encoder",
)
# the CPU scale's speed and memory measured again, side by side, on the other kind of machine
# the CI lends (machine A of docs/PERFORMANCE.md; the CPU scale's rows name an Intel Xeon)
SPEED_SUITES = ("paper-cpu-throughput", "paper-cpu-ablation", "paper-cpu-vocab")
AMD_EPYC = Scale(
    "CPU, AMD EPYC",
    {s: s for s in SPEED_SUITES},
    {"bert-tiny": "bert-tiny", "bert-small": "bert-small"},
    pending="These rows measure the CPU scale's speed and memory figures (Figure 2, Table 6, "
    "Figure 6) again on an AMD EPYC, side by side as there: `hlm run SUITE --task throughput "
    "--leaderboards leaderboards/amd-epyc` for each of "
    + ", ".join(f"`{s}`" for s in SPEED_SUITES)
    + ", on such a machine with nothing else running (41 minutes in all on the Intel Xeon "
    "whose rows the CPU scale holds); then `hlm plot SUITE --leaderboards leaderboards/amd-epyc` "
    "for the section's plots, and regenerate this page.",
    machine="AMD EPYC",
)
SCALES = (CPU, WIKI, GPU, GPU_MEDIUM, AMD_EPYC)
