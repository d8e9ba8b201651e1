"""The project's own files, known by their contents, not by where they lie.

    is_shipped(Path("suites/lm_eval_tasks/flores_utils.py"))   # True in a clean checkout

Code that a file names (a plugin, an lm-eval task folder's `!function` hooks) runs only when
the user trusts it or when it is the project's own. "Its own" was once "anything under the
project's `suites/` folder": a received suite copied there imported its plugins untrusted.
Now a file is shipped when git tracks it at the checkout's HEAD with the same bytes (its git
blob id recomputed from the file, read by the one reader). A file someone dropped in, or a
tracked file edited since, is not. Outside a git checkout (an installed wheel has no
`suites/`), nothing under it is shipped, and code it names needs `--trust-plugins`.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
from pathlib import Path

from zoo.errors import UserError
from zoo.reader import read_bytes

CHECKOUT = Path(__file__).resolve().parent.parent
SHIPPED_SUITES = CHECKOUT / "suites"  # the folder whose tracked files are the project's
MAX_CODE_BYTES = 16 * 2**20


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (sha1 of `blob SIZE\\0` and the bytes)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@functools.cache
def tracked_blobs() -> dict[str, str]:
    """{path relative to the checkout: blob id} of what git tracks under `suites/` at HEAD;
    empty outside a git checkout or without git."""
    git = shutil.which("git")
    if git is None or not (CHECKOUT / ".git").exists():
        return {}
    try:
        out = subprocess.run(
            [git, "-C", str(CHECKOUT), "ls-tree", "-r", "-z", "HEAD", "--", "suites"],
            capture_output=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    blobs = {}
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            blobs[name.decode("utf-8", "surrogateescape")] = fields[2].decode()
    return blobs


def is_shipped(path: Path) -> bool:
    """Whether `path` is a file of the project's `suites/` as git tracks it at HEAD, byte for
    byte (a link, a FIFO or an unreadable file is not)."""
    p = Path(path).expanduser().absolute()
    resolved = p.resolve()
    if not resolved.is_relative_to(SHIPPED_SUITES) or p.is_symlink():
        return False
    rel = resolved.relative_to(CHECKOUT).as_posix()
    want = tracked_blobs().get(rel)
    if want is None:
        return False
    try:
        data = read_bytes(resolved, "a shipped file", MAX_CODE_BYTES, links=False)
    except UserError:
        return False
    return git_blob_id(data) == want
