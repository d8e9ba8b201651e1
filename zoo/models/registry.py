"""The two model registries: presets (named specs) and families (one per HF model type).

A family file (`bert.py`, ...) registers its `ModelSpec` subclass in `FAMILIES` under its
Hugging Face ``model_type`` and each preset builder in `PRESETS`, with decorators; the
package `zoo.models` imports every family file explicitly, one line each.
"""

from __future__ import annotations

from collections.abc import Callable

from zoo.models.spec import ModelSpec
from zoo.registry import Registry

PresetBuilder = Callable[..., ModelSpec]
PRESETS: Registry[PresetBuilder] = Registry("preset")
FAMILIES: Registry[type[ModelSpec]] = Registry("model type")
