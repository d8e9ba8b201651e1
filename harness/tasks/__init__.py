"""Task types: what a suite can ask to measure, one file each, registered where defined.

A new built-in task type is its own file here (a `TaskType` subclass and its `TASKS.add`) plus
its import line below; users add theirs from a plugin file the same way:

    from harness.tasks import TASKS, TaskType

    class MyTask(TaskType):
        name, description = "my-task", "what it measures"

        def run(self, ctx): ...

    TASKS.add(MyTask.name, MyTask())
"""

from harness.tasks import (  # noqa: F401  # each file registers its task types
    blimp,
    encoder_benchmarks,
    lm_eval_task,
    probe,
    synonyms,
    throughput,
    validation,
    xnli,
)
from harness.tasks.base import TASKS, Identity, NoParams, Result, TaskContext, TaskType

__all__ = ["TASKS", "Identity", "NoParams", "Result", "TaskContext", "TaskType"]
