"""`lm_eval` task type: zero-shot (or few-shot) evaluation of a decoder through lm-eval 0.4.

The checkpoint is passed to lm-eval unmodified as `model=hf` (it loads with
AutoModelForCausalLM). Any lm-eval task name works, and so does a user's YAML directory
(`include_path`). For offline use, `harness/lm_eval_tasks/` ships task YAMLs over the local
files of $HLM_DATA_ROOT (hlm_lambada, hlm_boolq, hlm_crows_pairs_english, hlm_pubmedqa); since
lm-eval resolves relative data paths against the working directory, every YAML of those
folders is rendered at run time with `{data_root}` and `{work_dir}` replaced by absolute paths.
Every metric lm-eval returns is stored with its stderr.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.tasks.base import TASKS, Result, TaskContext, TaskType
from zoo.data.corpus import data_root
from zoo.errors import UserError

SHIPPED = Path(__file__).resolve().parents[1] / "lm_eval_tasks"


class LMEvalParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: list[str] = Field(
        min_length=1, description="lm-eval task names (hlm_* are the offline ones)"
    )
    include_path: list[str] = Field(
        default_factory=list, description="folders of your own task YAMLs"
    )
    num_fewshot: int = Field(0, ge=0)
    limit: int | None = Field(None, gt=0, description="examples per task (fast runs)")
    batch_size: int = Field(8, gt=0)
    data_dir: str | None = Field(None, description="local data root (default: $HLM_DATA_ROOT)")


def _pubmedqa_jsonl(root: Path, out: Path) -> None:
    """PubMedQA's labelled test split (500 PMIDs) as jsonl rows in the bigbio/lm-eval shape."""
    items = json.loads((root / "pubmedqa" / "ori_pqal.json").read_text())
    truth = json.loads((root / "pubmedqa" / "test_ground_truth.json").read_text())
    with out.open("w") as f:
        for pmid, label in truth.items():
            item = items[pmid]
            f.write(
                json.dumps(
                    {
                        "pubid": pmid,
                        "question": item["QUESTION"],
                        "contexts": item["CONTEXTS"],
                        "final_decision": label,
                    }
                )
                + "\n"
            )


def render_task_dirs(dirs: list[Path], root: Path, work: Path) -> list[str]:
    """Copy each task folder into `work`, with {data_root} / {work_dir} filled in."""
    out = []
    for i, d in enumerate(dirs):
        if not d.is_dir():
            raise UserError(f"lm_eval include_path not found: {d}")
        target = work / f"tasks{i}"
        shutil.copytree(d, target, ignore=shutil.ignore_patterns("__pycache__"))
        for y in target.rglob("*.yaml"):
            y.write_text(
                y.read_text().replace("{data_root}", str(root)).replace("{work_dir}", str(work))
            )
        out.append(str(target))
    if (root / "pubmedqa" / "ori_pqal.json").is_file():
        _pubmedqa_jsonl(root, work / "pubmedqa_test.jsonl")
    return out


# metrics lm-eval averages over examples: their per-example values are kept as samples, for
# the paired test of single-seed comparisons (perplexities aggregate otherwise: not kept)
PER_EXAMPLE = ("acc", "acc_norm", "exact_match", "likelihood_diff", "pct_stereotype")


def sample_scores(results: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, float]]:
    """(task, metric, filter) -> {doc_id: score} from lm-eval's logged samples."""
    out: dict[tuple[str, str, str], dict[str, float]] = {}
    for task, rows in (results["samples"] if "samples" in results else {}).items():
        for row in rows:
            for name in PER_EXAMPLE:
                value = row[name] if name in row else None
                if isinstance(value, bool | int | float):
                    key = (task, name, str(row["filter"]) if "filter" in row else "none")
                    out.setdefault(key, {})[str(row["doc_id"])] = float(value)
    return out


def parse_results(results: dict[str, Any]) -> list[Result]:
    samples = sample_scores(results)
    out = []
    directions = results.get("higher_is_better", {})
    for task, metrics in results["results"].items():
        for key, value in metrics.items():
            if "," not in key or "_stderr" in key or not isinstance(value, int | float):
                continue
            name, filt = key.split(",", 1)
            stderr = metrics.get(f"{name}_stderr,{filt}")
            se = (
                float(stderr)
                if isinstance(stderr, int | float) and math.isfinite(float(stderr))
                else None
            )
            label = f"lm_eval/{task}" if filt == "none" else f"lm_eval/{task}/{filt}"
            out.append(
                Result(
                    name,
                    float(value),
                    stderr=se,
                    task=label,
                    higher_is_better=directions.get(task, {}).get(name),
                    samples=samples[(task, name, filt)] if (task, name, filt) in samples else None,
                )
            )
    return out


def run_lm_eval(ctx: TaskContext) -> list[Result]:
    import lm_eval
    from lm_eval.tasks import TaskManager

    from zoo.models import family_of
    from zoo.train.checkpoint import hf_config

    p: LMEvalParams = ctx.params
    if ctx.checkpoint is None:
        raise UserError("lm_eval needs a checkpoint")
    if family_of(hf_config(str(ctx.checkpoint))).kind != "decoder":
        raise UserError(f"{ctx.checkpoint}: lm_eval scores causal LMs; this is an encoder")
    root = Path(p.data_dir) if p.data_dir else data_root()
    with tempfile.TemporaryDirectory(prefix="hlm-lm-eval-") as tmp:
        user = [ctx.suite_dir / d for d in p.include_path]
        includes = render_task_dirs([SHIPPED, *user], root.resolve(), Path(tmp))
        manager = TaskManager(include_path=includes)
        unknown = [t for t in p.tasks if t not in manager.all_tasks]
        if unknown:
            raise UserError(f"unknown lm-eval task(s): {', '.join(unknown)}")
        results = lm_eval.simple_evaluate(
            model="hf",
            model_args={"pretrained": str(ctx.checkpoint), "device": "cpu", "dtype": "float32"},
            tasks=p.tasks,
            task_manager=manager,
            num_fewshot=p.num_fewshot,
            limit=p.limit,
            batch_size=p.batch_size,
            random_seed=ctx.seed,
            numpy_random_seed=ctx.seed,
            torch_random_seed=ctx.seed,
            log_samples=True,  # per-example scores: the paired test of single-seed comparisons
        )
    if results is None:
        raise UserError("lm-eval returned no results")
    return parse_results(results)


def _check(p: LMEvalParams, suite_dir: Path) -> list[tuple[str, str]]:
    return [
        (f"include_path[{i}]", f"folder not found: {suite_dir / d}")
        for i, d in enumerate(p.include_path)
        if not (suite_dir / d).is_dir()
    ]


LM_EVAL_TASK = TaskType(
    name="lm_eval",
    description="lm-eval (0.4) zero/few-shot tasks on a decoder checkpoint (model=hf), every metric with stderr",
    run=run_lm_eval,
    params=LMEvalParams,
    kinds=("decoder",),
    check=_check,
)
TASKS.add(LM_EVAL_TASK.name, LM_EVAL_TASK)
