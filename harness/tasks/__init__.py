"""Task types, registered here explicitly; users add theirs from a plugin file:

from harness.tasks import TASKS, TaskType
TASKS.add("my-task", TaskType("my-task", "what it measures", run=my_run))
"""

from harness.tasks.base import NoParams, Result, TaskContext, TaskType
from harness.tasks.finetuning import GLUE_TASK, SUPERGLUE_TASK, SYNTHETIC_TASK, XNLI_TASK
from harness.tasks.lm_eval_task import LM_EVAL_TASK
from harness.tasks.throughput import THROUGHPUT
from harness.tasks.validation import VALIDATION
from zoo.registry import Registry

TASKS: Registry[TaskType] = Registry("task type")
for _task in (
    VALIDATION,
    THROUGHPUT,
    GLUE_TASK,
    SUPERGLUE_TASK,
    XNLI_TASK,
    LM_EVAL_TASK,
    SYNTHETIC_TASK,
):
    TASKS.add(_task.name, _task)

__all__ = ["TASKS", "NoParams", "Result", "TaskContext", "TaskType"]
