"""The install is locked: `requirements.lock` pins every package with sha256 hashes, holds
every dependency pyproject.toml names (torch apart: its CPU build is installed on its own),
agrees with constraints.txt, and is what this environment runs."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def _lock() -> dict[str, tuple[str, int]]:
    """{package: (version, hashes)} of requirements.lock."""
    out: dict[str, tuple[str, int]] = {}
    name = ""
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if m := PIN.match(line):
            name = canonicalize_name(m.group(1))
            out[name] = (m.group(2), 0)
        elif "--hash=sha256:" in line and name:
            version, hashes = out[name]
            out[name] = (version, hashes + 1)
    return out


def test_every_package_is_pinned_with_hashes() -> None:
    lock = _lock()
    assert len(lock) > 100
    assert not [n for n, (_, hashes) in lock.items() if hashes == 0]
    assert "torch" not in lock  # the CPU build, installed on its own by `make env`


def test_the_lock_holds_every_declared_dependency_within_its_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    lock = _lock()
    for text in declared:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        if name == "torch":
            continue
        assert name in lock, name
        assert req.specifier.contains(lock[name][0], prereleases=True), (text, lock[name][0])


def test_the_lock_agrees_with_the_constraints() -> None:
    lock = _lock()
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            name = canonicalize_name(req.name)
            if name != "torch":
                assert req.specifier.contains(lock[name][0]), (line, lock[name][0])


def test_this_environment_runs_the_locked_versions() -> None:
    """`make env` installs the lock; a test run on other versions would vouch for them."""
    drift = {
        name: (version, installed)
        for name, (version, _) in _lock().items()
        if (installed := metadata.version(name)) != version
    }
    assert not drift, f"installed versions differ from requirements.lock: {drift}"
