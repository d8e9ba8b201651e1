"""The sections of a run config, one typed model each; `zoo.train.config.PretrainConfig`
combines them. A new setting goes into the section it belongs to, with its role
(`zoo.train.roles.role`)."""

from zoo.train.sections.data import DataSettings
from zoo.train.sections.model import ModelSettings, ObjectiveSettings
from zoo.train.sections.runtime import EvaluationSettings, RuntimeSettings
from zoo.train.sections.training import OptimSettings, ScheduleSettings

__all__ = [
    "DataSettings",
    "EvaluationSettings",
    "ModelSettings",
    "ObjectiveSettings",
    "OptimSettings",
    "RuntimeSettings",
    "ScheduleSettings",
]
