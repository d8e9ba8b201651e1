"""Budget marks: the tokens, FLOPs or seconds at which a run keeps a checkpoint."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationError

from zoo.errors import format_validation_error
from zoo.settings import Settings

# the suffixes a budget's number may carry, as tables print it: 40.3M tokens, 1.5T FLOPs
SUFFIXES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_amount(text: str) -> float:
    """`2e6`, `40.3M` or `1.5T` as a number (k, M, G, T: thousands to trillions); a
    ValueError names the text where it is none of these."""
    text = text.strip()
    scale = SUFFIXES.get(text[-1:], 1.0)
    try:
        return float(text[:-1] if scale != 1.0 else text) * scale
    except ValueError:
        raise ValueError(f"{text!r} is not a number (2e6, 40.3M)") from None


class BudgetMarks(Settings):
    """Budgets at which a run keeps a checkpoint, the first step it reaches each (so that
    models can be compared at equal tokens, FLOPs or seconds, paper Table 1)."""

    tokens: list[Annotated[int, Field(gt=0)]] = Field(default_factory=list)
    flops: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    seconds: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)

    @classmethod
    def from_flag(cls, text: str) -> BudgetMarks:
        """`tokens=1e6,flops=2e15,tokens=4e6` (a command-line flag) as marks; a ValueError
        (which argparse reports with the flag) when a part is not NAME=NUMBER."""
        marks: dict[str, list[float]] = {name: [] for name in cls.model_fields}
        for part in filter(None, text.split(",")):
            name, sep, value = part.partition("=")
            if not sep or name.strip() not in marks:
                raise ValueError(f"{part!r}: expected NAME=NUMBER, NAME one of {', '.join(marks)}")
            try:
                marks[name.strip()].append(parse_amount(value))
            except ValueError as exc:
                raise ValueError(f"{part!r}: {exc}") from None
        marks["tokens"] = [int(t) if float(t).is_integer() else t for t in marks["tokens"]]
        try:
            return cls.model_validate(marks)
        except ValidationError as exc:
            raise ValueError(format_validation_error(exc, text).split(": ", 1)[1]) from None

    def reached(self, tokens: int, flops: float, seconds: float) -> list[str]:
        """Every mark at or below these counters, as `tokens=T` / `flops=F` / `seconds=S`."""
        return [
            f"{name}={mark:g}"
            for name, marks, value in (
                ("tokens", self.tokens, tokens),
                ("flops", self.flops, flops),
                ("seconds", self.seconds, seconds),
            )
            for mark in marks
            if value >= mark
        ]


def planned_steps(max_steps: int, max_tokens: int | None, tokens_per_step: int) -> int:
    """The step a run stops at where its step or token budget decides (a FLOPs or seconds
    budget may stop it sooner): a progress bar's total and its ETA's, `hlm runs`' count."""
    if max_tokens is None:
        return max_steps
    return min(max_steps, -(-max_tokens // tokens_per_step))  # ceil
