"""The `lm_eval` task type's params: lm-eval's settings under its names and meanings, as
`lm_eval run` takes them (`--gen_kwargs`, `--apply_chat_template`, `--metadata`,
`--model_args revision=/max_length=`...), and how they reach `lm_eval.simple_evaluate`.

Every param that changes a score is part of a cell's key (a task's params are); those that
change none (`use_cache`, `write_out`) are listed in `UNSCORED` and left out of it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from zoo.errors import UserError
from zoo.settings import Settings

DEVICE = r"auto|cpu|cuda(?::[0-9]+)?|mps"  # as lm-eval's --device takes them
UNSCORED = frozenset({"use_cache", "write_out"})  # params that change no score: not keyed


AUTO = r"auto(?::([1-9][0-9]*))?"  # lm-eval's batch sizes it finds itself
MAX_BATCH = 65_536  # sequences a step, or searches: past any device's memory


class LMEvalParams(Settings):
    tasks: list[str] = Field(
        min_length=1, description="lm-eval task names (hlm_* are the offline ones)"
    )
    include_path: list[str] = Field(
        default_factory=list, description="folders of your own task YAMLs"
    )
    num_fewshot: int = Field(0, ge=0, le=1000)
    limit: int | float | None = Field(
        None,
        description="examples per task (fast runs), or a fraction of them below 1, as lm-eval's",
    )
    batch_size: int | str = Field(8, description="an integer, auto or auto:N, as lm-eval's")
    output_path: str | None = Field(
        None,
        description="also write lm-eval's own results file (and samples, with log_samples) "
        "there, as `lm_eval --output_path` does: a folder (results under MODEL/results_DATE.json) "
        "or a .json path; relative to the suite file",
    )
    data_dir: str | None = Field(None, description="local data root (default: $HLM_DATA_ROOT)")
    device: str = Field(
        "auto",
        pattern=f"^({DEVICE})$",
        description="where lm-eval runs the model: auto (cuda where torch sees a GPU), cpu, "
        "cuda, cuda:N or mps",
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="the model's dtype under lm-eval: auto (bfloat16 on CUDA, else float32)"
    )
    log_samples: bool = Field(
        False, description="also keep lm-eval's per-sample log (prompts, answers) in the artifacts"
    )
    progress: bool = Field(
        False, description="show lm-eval's own progress bars (off inside a suite's cell bar)"
    )
    seeds: list[int | None] | None = Field(
        None,
        min_length=4,
        max_length=4,
        description="lm-eval's four seeds (python random, numpy, torch, few-shot sampling; "
        "None leaves one unset), as `lm_eval --seed` sets them; default: the cell's seed for "
        "the first three, lm-eval's 1234 for few-shot sampling",
    )

    gen_kwargs: dict[str, Any] | None = Field(
        None, description="lm-eval's --gen_kwargs: generation settings over each task's own"
    )
    apply_chat_template: bool | str = Field(
        False, description="lm-eval's --apply_chat_template: the tokenizer's (or a named) template"
    )
    fewshot_as_multiturn: bool | None = Field(
        None, description="lm-eval's: few-shot examples as turns (default: with a chat template)"
    )
    system_instruction: str | None = Field(None, description="lm-eval's system instruction")
    predict_only: bool = Field(
        False, description="lm-eval's --predict_only: model outputs kept, no metric computed"
    )
    metadata: dict[str, Any] | None = Field(
        None, description="lm-eval's --metadata, merged with the model args (RULER's lengths)"
    )
    revision: str | None = Field(
        None, description="model_args revision=: the hub checkpoint's commit, tag or branch"
    )
    max_length: int | None = Field(
        None, gt=0, le=1 << 20, description="model_args max_length=: the context lm-eval uses"
    )
    use_cache: str | None = Field(
        None, description="lm-eval's --use_cache: an SQLite file of model responses (not keyed)"
    )
    write_out: bool = Field(
        False, description="lm-eval's --write_out: print the first documents' prompts (not keyed)"
    )

    @field_validator("limit")
    @classmethod
    def _count_or_fraction(cls, v: float | None) -> float | None:
        if v is None or (isinstance(v, int) and v > 0) or 0 < v < 1:
            return v
        raise ValueError("a count of examples above 0, or a fraction between 0 and 1")

    @field_validator("batch_size")
    @classmethod
    def _size_or_auto(cls, v: int | str) -> int | str:
        """An integer, `auto` or `auto:N`, each number within 1..MAX_BATCH (lm-eval divided
        by zero at auto:99999999999)."""
        found = re.fullmatch(AUTO, v) if isinstance(v, str) else None
        number = v if isinstance(v, int) else int(found[1]) if found and found[1] else 1
        if (isinstance(v, int) or found) and 0 < number <= MAX_BATCH:
            return v
        raise ValueError(f"an integer above 0, auto or auto:N (numbers up to {MAX_BATCH})")


def lm_eval_seeds(p: LMEvalParams, seed: int) -> dict[str, int | None]:
    """`simple_evaluate`'s seed arguments: `seeds` as lm-eval's `--seed` gives them, else
    the cell's seed for random, numpy and torch (few-shot sampling at lm-eval's default)."""
    names = ("random_seed", "numpy_random_seed", "torch_random_seed", "fewshot_random_seed")
    if p.seeds is None:
        return dict(zip(names[:3], (seed, seed, seed), strict=True))
    return dict(zip(names, p.seeds, strict=True))


def device_and_dtype(p: LMEvalParams) -> tuple[str, str]:
    """The device and dtype lm-eval gets: the asked ones, `auto` resolved."""
    import torch

    device = p.device if p.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError("lm_eval: device 'cuda' asked for, but torch sees no CUDA device")
    dtype = p.dtype if p.dtype != "auto" else ("bfloat16" if device != "cpu" else "float32")
    return device, dtype


def model_args_of(p: LMEvalParams, checkpoint: str, dtype: str) -> dict[str, Any]:
    """lm-eval's model_args, as `lm_eval run` passes them: the checkpoint, its dtype, and the
    `revision` and `max_length` asked for."""
    args: dict[str, Any] = {"pretrained": checkpoint, "dtype": dtype}
    if p.revision is not None:
        args["revision"] = p.revision
    if p.max_length is not None:
        args["max_length"] = p.max_length
    return args


def scoring_args(p: LMEvalParams, model_args: dict[str, Any]) -> dict[str, Any]:
    """`simple_evaluate`'s arguments from lm-eval's flags beyond the tasks and model; the
    metadata merged with the model args, as `lm_eval run` merges them."""
    return {
        "gen_kwargs": p.gen_kwargs or {},
        "apply_chat_template": p.apply_chat_template,
        "fewshot_as_multiturn": p.fewshot_as_multiturn,
        "system_instruction": p.system_instruction,
        "predict_only": p.predict_only,
        "use_cache": p.use_cache,
        "write_out": p.write_out,
        "metadata": {**model_args, **(p.metadata or {})},
    }
