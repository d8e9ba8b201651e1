"""Where a row comes from: the commit of this checkout, and the time it was computed.

git_sha()                            # '3a07576...' ('' in an installed copy)
git_output("rev-parse", "--absolute-git-dir")
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path


def git_output(*args: str) -> str:
    """What `git ARGS` prints in this project's folder, stripped; '' where git or the
    repository is missing (an installed copy)."""
    try:
        out = subprocess.run(
            ["git", *args],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def git_sha() -> str:
    """The commit of this checkout ('' where it is none)."""
    return git_output("rev-parse", "HEAD")


def now() -> datetime:
    return datetime.now(UTC)
