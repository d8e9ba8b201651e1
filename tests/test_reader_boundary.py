"""Every file the product reads is opened by the one reader (`zoo.reader`): a scan of every
module for the calls that open or read a path, as the architecture test scans imports.

A call counts as a read when it opens a path for reading (`open`, `Path.open`, `os.open`
without a write flag), reads one whole (`.read_text()`, `.read_bytes()`), or hands a path to a
library's reader (Parquet, numpy, torch, safetensors, shutil's copies). The few that stay are
listed with the reason each is safe; a new one fails here until it goes through the reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGES = ("zoo", "harness", "benchmarks")
THE_READER = "zoo/reader.py"

PATH_READS = {"read_text", "read_bytes"}
LIBRARY_READS = {
    ("pq", "read_table"),
    ("pq", "read_schema"),
    ("pq", "ParquetFile"),
    ("pd", "read_parquet"),
    ("pd", "read_csv"),
    ("pd", "read_json"),
    ("np", "load"),
    ("np", "fromfile"),
    ("np", "memmap"),
    ("torch", "load"),
    ("json", "load"),
    ("shutil", "copy"),
    ("shutil", "copy2"),
    ("shutil", "copyfile"),
    ("shutil", "copytree"),
}
WRITE_MODES = set("wxa")

# file:call -> why it may read outside the one reader
ALLOWED = {
    "zoo/hardware.py:path.read_text": "/proc/cpuinfo: the kernel's, not a file anyone sent",
    "harness/bench/memory.py:Path('/proc/self/status').read_text": "the kernel's /proc",
    "harness/bench/memory.py:Path('/proc/self/smaps_rollup').read_text": "the kernel's /proc",
    "harness/run/claims.py:Path(f'/proc/{pid}/stat').read_text": "the kernel's /proc",
    "harness/lm_eval_tasks/hlm_utils.py:_data_file('pubmedqa', 'ori_pqal.json').read_text": (
        "plain lm-eval imports this file without the project: it reads the shipped data root"
    ),
    "harness/lm_eval_tasks/hlm_utils.py:_data_file('pubmedqa', 'test_ground_truth.json')"
    ".read_text": "plain lm-eval imports this file without the project",
    "harness/lm_eval_tasks/hlm_blimp_utils.py:_data_file('blimp', name).read_text": (
        "plain lm-eval imports this file without the project: it reads the data root"
    ),
    "zoo/checkpoint_files.py:safe_open": "after check_weights_file read its header strictly",
    "zoo/train/checkpoint.py:load_file": "after check_weights (regular file, header checked)",
    "zoo/data/readers.py:pq.ParquetFile": "parses bytes the reader read (pa.BufferReader)",
    "harness/results/leaderboard.py:pq.read_table": "parses bytes the reader read",
    "harness/results/leaderboard.py:pq.read_schema": "reads a file object open_regular opened",
    "harness/results/samples.py:pq.read_table": "parses bytes the reader read",
    "harness/results/migrate.py:pq.read_table": "parses bytes the reader read",
    "harness/results/migrate.py:pq.read_schema": "reads a file object open_regular opened",
    "zoo/data/cache.py:np.load": "reads a file object open_regular opened",
    "zoo/data/cache.py:np.memmap": "a token cache part check_regular and its size checked",
    "zoo/train/safe_load.py:torch.load": "reads a file object open_regular opened",
    "harness/report/figures.py:Image.open": "an in-memory PNG this process drew",
    "harness/run/why.py:pq.read_table": "parses bytes the reader read",
}


def _mode(call: ast.Call, first: int) -> str:
    """The mode string of an open call (its positional argument at `first`, or `mode=`)."""
    args = call.args[first : first + 1] + [k.value for k in call.keywords if k.arg == "mode"]
    for a in args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            return a.value
    return "r"


def _os_open_writes(call: ast.Call) -> bool:
    flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
    return any(f in flags for f in ("O_WRONLY", "O_CREAT", "O_RDWR"))


def _reads(path: Path, rel: str) -> list[str]:
    """`rel:call` for each call in `path` that reads a path outside the one reader."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        call = _name_read(node, fn) if isinstance(fn, ast.Name) else _attribute_read(node, fn)
        if call is not None:
            found.append(f"{rel}:{call}")
    return found


def _name_read(node: ast.Call, fn: ast.Name) -> str | None:
    """A bare call that reads: `open(path)` for reading, safetensors' readers."""
    if fn.id == "open":
        return None if WRITE_MODES & set(_mode(node, 1)) else "open"
    return fn.id if fn.id in ("safe_open", "load_file") else None


def _attribute_read(node: ast.Call, fn: ast.expr) -> str | None:
    """A method call that reads a path: `p.open()`, `os.open` without a write flag, a whole
    file's `.read_text()`, a library's reader of a path."""
    if not isinstance(fn, ast.Attribute):
        return None
    base = ast.unparse(fn.value)
    if fn.attr == "open" and base == "os":
        return None if _os_open_writes(node) else "os.open"
    if fn.attr == "open":
        writes = WRITE_MODES & set(_mode(node, 0)) and base not in ("Image", "tarfile", "zipfile")
        return None if writes else f"{base}.open"
    if fn.attr in PATH_READS or (base, fn.attr) in LIBRARY_READS:
        return f"{base}.{fn.attr}"
    return fn.attr if fn.attr in ("safe_open", "load_file") else None


def _product_reads() -> list[str]:
    calls = []
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel != THE_READER:
                calls += _reads(f, rel)
    return calls


def test_every_read_goes_through_the_one_reader() -> None:
    outside = [c for c in _product_reads() if c not in ALLOWED]
    assert not outside, "reads outside zoo.reader (use read_bytes/read_text/open_regular):\n" + (
        "\n".join(outside)
    )


def test_each_allowed_read_still_exists() -> None:
    """An exception whose call is gone is removed from the list, not kept in case."""
    present = set(_product_reads())
    assert not [k for k in ALLOWED if k not in present]


def test_the_scan_finds_the_reads_it_looks_for(tmp_path) -> None:
    """The scan itself sees each kind of read (so an empty result means something)."""
    src = tmp_path / "probe.py"
    src.write_text(
        "import os, numpy as np, pyarrow.parquet as pq\n"
        "from pathlib import Path\n"
        "def f(p: Path):\n"
        "    open(p)\n"
        "    open(p, 'rb')\n"
        "    open(p, 'w')\n"
        "    p.open()\n"
        "    p.open('a')\n"
        "    p.read_text()\n"
        "    os.open(p, os.O_RDONLY)\n"
        "    os.open(p, os.O_CREAT | os.O_WRONLY)\n"
        "    pq.read_table(p)\n"
        "    np.load(p)\n"
    )
    found = _reads(src, "probe.py")
    kinds = [c.split(":", 1)[1] for c in found]
    assert kinds == ["open", "open", "p.open", "p.read_text", "os.open", "pq.read_table", "np.load"]
