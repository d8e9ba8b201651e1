"""tools/slim_wheel.py: a wheel rewritten without the files of some subfolders, which pip
still installs (its RECORD checked), holding every other file as it was."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import load_tool

slim_wheel = load_tool("slim_wheel")
main, slim = slim_wheel.main, slim_wheel.slim

FILES = {
    "pkg/__init__.py": b"VALUE = 1\n",
    "pkg/tasks/__init__.py": b"from pkg.tasks.manager import NAME\n",
    "pkg/tasks/manager.py": b"NAME = 'manager'\n",
    "pkg/tasks/mmlu/mmlu.yaml": b"task: mmlu\n" * 50,
    "pkg/tasks/bbh/deep/x.yaml": b"task: bbh\n",
    "pkg/other/data.txt": b"kept\n",
    "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
    "pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel(folder: Path) -> Path:
    path = folder / "pkg-1.0-py3-none-any.whl"
    record = "".join(f"{n},{_hash(d)},{len(d)}\n" for n, d in FILES.items())
    with zipfile.ZipFile(path, "w") as z:
        for name, data in FILES.items():
            z.writestr(name, data)
        z.writestr("pkg-1.0.dist-info/RECORD", record + "pkg-1.0.dist-info/RECORD,,\n")
    return path


def test_the_subfolders_go_and_the_record_lists_what_stays(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    assert slim(wheel, ["pkg/tasks"]) == (6, 2)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        kept = {n: z.read(n) for n in names if not n.endswith("RECORD")}
        record = list(csv.reader(io.StringIO(z.read("pkg-1.0.dist-info/RECORD").decode())))
    gone = {"pkg/tasks/mmlu/mmlu.yaml", "pkg/tasks/bbh/deep/x.yaml"}
    assert kept == {n: d for n, d in FILES.items() if n not in gone}
    assert record == [
        *([n, _hash(d), str(len(d))] for n, d in FILES.items() if n not in gone),
        ["pkg-1.0.dist-info/RECORD", "", ""],
    ]


def test_pip_installs_the_slim_wheel_and_its_modules_import(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    assert main([str(wheel), "--drop-subfolders", "pkg/tasks"]) == 0
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    subprocess.run([*pip, "--target", str(site), str(wheel)], check=True)
    assert not (site / "pkg" / "tasks" / "mmlu").exists()
    out = subprocess.run(
        [sys.executable, "-c", "import pkg.tasks; print(pkg.tasks.NAME)"],
        env={"PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "manager"


def test_a_folder_the_wheel_lacks_is_an_error_and_the_wheel_is_kept(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    before = wheel.read_bytes()
    with pytest.raises(SystemExit, match="has no folder pkg/task"):
        slim(wheel, ["pkg/task"])
    assert wheel.read_bytes() == before
