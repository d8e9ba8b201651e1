"""Task types: what a suite can ask to measure, one file each, registered where defined.

A new built-in task type is its own file here plus its import line below; users add theirs
from a plugin file:

    from harness.tasks import TASKS, TaskType
    TASKS.add("my-task", TaskType("my-task", "what it measures", run=my_run))
"""

from harness.tasks import (  # noqa: F401  # each file registers its task types
    encoder_benchmarks,
    lm_eval_task,
    probe,
    synonyms,
    throughput,
    validation,
)
from harness.tasks.base import TASKS, NoParams, Result, TaskContext, TaskType

__all__ = ["TASKS", "NoParams", "Result", "TaskContext", "TaskType"]
