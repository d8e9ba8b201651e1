"""A size at which a claims file's claims are compared again: its suites and models mapped.

A claims file (`harness.paper.claims_file`) lists its claims once, at its first scale; a later
scale says which scale it is `like` and maps each of that scale's suites to its own and each
preset to its own, keeping the claims' tasks, metrics and gates. The paper's file maps the
CPU suites to English Wikipedia (bert-mini, gpt2-11m) and to a GPU (bert-small, bert-medium,
pythia-70m). A scale with a `machine` measures the first scale's speeds and memory again on
a second kind of machine, into its own folder of the leaderboards (`leaderboards/amd-epyc/`):
it compares those figures only (`Source.unit` "measurement": nothing is pretrained).

    Scale("GPU", {"paper-cpu-encoder": "paper-gpu-encoder"}, {"bert-tiny": "bert-small"})
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.paper.sources import Source


@dataclass(frozen=True)
class Scale:
    """A size at which claims are compared: `suites` maps each suite of the scale it is like
    to this scale's (a suite it lacks: those claims are not compared here), `models` each
    preset to this scale's. `pending`: what the report says of its suites while no claim has
    rows for both its arms. `speed_suite`: the suite measuring this scale's speeds side by side,
    where the equal-time speed's suite is not mapped. `machine`: the kind of machine (as its
    rows' `hardware` names it) on which the scale measures speed and memory again."""

    name: str
    suites: dict[str, str]
    models: dict[str, str]
    pending: str = ""
    speed_suite: str = ""
    machine: str = ""

    def source(self, base: Source) -> Source | None:
        """Our source at this scale of a claim whose source at the first scale is `base`, or
        None where this scale does not compare it."""
        if base.suite not in self.suites or (self.machine and base.unit != "measurement"):
            return None
        if self.machine:
            return replace(base, suite=self.suites[base.suite], machine=self.machine)
        roles = {r: self._model(m) for r, m in base.roles.items()}
        speed = None
        if base.speed is not None:
            measured = self.suites.get(base.speed[0], self.speed_suite)
            speed = (measured, self._model(base.speed[1])) if measured else None
        return replace(base, suite=self.suites[base.suite], roles=roles, speed=speed)

    def _model(self, label: str) -> str:
        """`label` (a preset, a dash, the rest) with this scale's preset."""
        preset = next(p for p in self.models if label.startswith(f"{p}-"))
        return self.models[preset] + label.removeprefix(preset)
