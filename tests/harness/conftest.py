from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
TINY = HERE / "data" / "tiny.yaml"
