"""Trust by content: a file under the project's suites folder is the project's own only when
git tracks it at HEAD with the same bytes; one copied there, or edited since, is not."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import zoo.shipped as shipped
from zoo.shipped import git_blob_id, is_shipped


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    ).stdout


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch) -> Path:
    """A git checkout with suites/plugin.py committed, seen as the project's."""
    if shutil.which("git") is None:
        pytest.fail("git is needed: the project's trust rule reads its history")
    repo = tmp_path / "repo"
    (repo / "suites" / "tasks").mkdir(parents=True)
    (repo / "suites" / "plugin.py").write_text("X = 1\n")
    (repo / "suites" / "tasks" / "utils.py").write_text("def f(): ...\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "shipped")
    monkeypatch.setattr(shipped, "CHECKOUT", repo)
    monkeypatch.setattr(shipped, "SHIPPED_SUITES", repo / "suites")
    shipped.tracked_blobs.cache_clear()
    yield repo
    shipped.tracked_blobs.cache_clear()


def test_a_tracked_file_as_committed_is_shipped(checkout: Path) -> None:
    assert is_shipped(checkout / "suites" / "plugin.py")
    assert is_shipped(checkout / "suites" / "tasks" / "utils.py")


def test_a_file_copied_into_the_suites_folder_is_not(checkout: Path) -> None:
    received = checkout / "suites" / "received.py"
    received.write_text("import os; os.system('echo owned')\n")
    assert not is_shipped(received)


def test_an_edited_or_replaced_tracked_file_is_not(checkout: Path, tmp_path: Path) -> None:
    plugin = checkout / "suites" / "plugin.py"
    plugin.write_text("X = 2\n")
    assert not is_shipped(plugin)
    plugin.unlink()
    (tmp_path / "same.py").write_text("X = 1\n")
    plugin.symlink_to(tmp_path / "same.py")  # the same bytes, through a link: not shipped
    assert not is_shipped(plugin)
    plugin.unlink()
    os.mkfifo(plugin)  # a FIFO where a plugin was: never read, not shipped
    assert not is_shipped(plugin)


def test_outside_a_checkout_nothing_is_shipped(checkout: Path) -> None:
    shutil.rmtree(checkout / ".git")
    shipped.tracked_blobs.cache_clear()
    assert not is_shipped(checkout / "suites" / "plugin.py")


def test_the_blob_id_is_gits() -> None:
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
