"""The code's shape: module and function sizes, no import cycles, the harness's packages in the
order its data flows, no loose-dict reads of metadata."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import hlm_imports

ROOT = Path(__file__).parents[1]
PACKAGES = ("zoo", "harness", "benchmarks")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in (ROOT / pkg).rglob("*.py"):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = f
    return out


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Project modules imported anywhere in the file: at module level, inside functions (a
    deferred import is still a dependency) and under TYPE_CHECKING."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found |= {n for n in names if n in modules}
    return found


def test_no_module_over_400_lines() -> None:
    long = {m: n for m, f in _modules().items() if (n := len(f.read_text().splitlines())) > 400}
    assert not long


def test_no_production_module_patches_what_it_calls() -> None:
    """Patching is for tests: the product asks a library through its public options."""
    patching = [
        name
        for name, path in _modules().items()
        if re.search(
            r"^\s*(from unittest import mock|import unittest|from unittest\.mock)",
            path.read_text(),
            re.M,
        )
    ]
    assert patching == []


def test_no_import_cycles() -> None:
    modules = _modules()
    graph = {m: _imports(f, modules) - {m} for m, f in modules.items()}
    # a package's __init__ importing its own submodules is the package, not a cycle
    for m in graph:
        graph[m] = {d for d in graph[m] if not d.startswith(m + ".")}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in graph[m]:
            if state.get(d) == 1:
                cycles.append([*stack[stack.index(d) :], d] if d in stack else [m, d])
            elif d not in state:
                visit(d, [*stack, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles


def test_metadata_and_variants_are_never_read_as_loose_dicts() -> None:
    offenders = []
    for f in [*(ROOT / "zoo").rglob("*.py"), *(ROOT / "harness").rglob("*.py")]:
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if (
                "meta.get(" in line or "metadata.get(" in line or "variant.get(" in line
            ) and "#" not in line:
                offenders.append(f"{f.relative_to(ROOT)}:{n}")
    assert not offenders


def test_no_function_over_100_lines() -> None:
    long = []
    for m, f in _modules().items():
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 100:
                    long.append(f"{m}.{node.name}: {n} lines")
    assert not long


# harness's packages (and its few top-level modules), each importing only those before it:
# the results' schema at the bottom, the paper's reproduction above every generic part, so
# that a suite, a run, a report or a publish never depends on the paper
HARNESS_LAYERS = (
    "results",
    "logs",
    "lm_eval_tasks",
    "bench",
    "downstream",
    "tasks",
    "suite",
    "report",
    "publish",
    "run",
    "paper",
    "cli",
)


def _harness_part(path: Path) -> str:
    parts = path.relative_to(ROOT / "harness").with_suffix("").parts
    return parts[0]


def test_harness_packages_import_only_earlier_layers() -> None:
    """Every import, function-level ones included: a deferred import is still a dependency."""
    order = {name: i for i, name in enumerate(HARNESS_LAYERS)}
    wrong = []
    for f in (ROOT / "harness").rglob("*.py"):
        part = _harness_part(f)
        if part == "__init__":
            continue
        assert part in order, f"{f.relative_to(ROOT)}: a harness part missing from HARNESS_LAYERS"
        for node in ast.walk(ast.parse(f.read_text())):
            mods = (
                [node.module]
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for mod in mods:
                if mod.startswith("harness.") and mod.split(".")[1] != part:
                    dep = mod.split(".")[1]
                    if order[dep] > order[part]:
                        wrong.append(f"{f.relative_to(ROOT)} imports {mod}")
    assert not wrong


def test_only_the_bench_verb_runs_the_repositorys_benchmarks() -> None:
    """`benchmarks/` measures the project; the project never depends on it (the throughput
    task's machinery is `harness.bench`), but for the verb that runs it."""
    modules = _modules()
    users = sorted(
        name
        for name, path in modules.items()
        if not name.startswith("benchmarks")
        and any(m.split(".")[0] == "benchmarks" for m in _imports(path, modules))
    )
    assert users == ["harness.cli.bench"]


def test_harness_top_level_holds_only_the_cli() -> None:
    loose = sorted(p.name for p in (ROOT / "harness").glob("*.py"))
    assert loose == ["__init__.py", "logs.py"]


def test_tests_mirror_the_packages() -> None:
    """Each folder of tests/harness names a harness package."""
    folders = {
        p.name for p in (ROOT / "tests" / "harness").iterdir() if (p / "__init__.py").is_file()
    }
    packages = {p.name for p in (ROOT / "harness").iterdir() if (p / "__init__.py").is_file()}
    assert folders <= packages, folders - packages


def test_reading_results_imports_no_model_code() -> None:
    """A notebook that reads a leaderboard (or the folder helpers every writer shares) loads
    neither torch nor transformers: the results layer does not reach into training code."""
    import subprocess
    import sys

    light = [
        "harness.results.leaderboard",
        "harness.results.significance",
        "zoo.train.atomic",
        "harness.suite",  # the schema and the checks' registries: declarations only
        "harness.tasks",
        "zoo.models",
        "zoo.tokenizers",
    ]
    probe = (
        f"import sys; import {', '.join(light)}; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# verbs that read a suite or a leaderboard and compute nothing (a run's plan among them): they
# answer in about a second of imports, not the several transformers and torch take
READING_VERBS = [
    ["validate", "suites/quickstart.yaml"],
    ["run", "suites/quickstart.yaml", "--dry-run"],
    ["leaderboard", "paper-cpu-encoder"],
    ["power", "paper-cpu-encoder"],
    ["ls"],
]


@pytest.mark.parametrize("argv", READING_VERBS, ids=" ".join)
def test_verbs_that_read_suites_and_leaderboards_load_no_model_code(argv: list[str]) -> None:
    status, loaded, stderr = hlm_imports(argv)
    assert (status, loaded) == (0, []), stderr[-2000:]


@pytest.mark.parametrize("argv", READING_VERBS[:2], ids=" ".join)
def test_verbs_that_read_a_suite_load_no_scoring_libraries(argv: list[str]) -> None:
    """Metrics import scikit-learn and scipy where they score: checking a suite, or planning
    its run, skips their second or more of imports."""
    status, loaded, stderr = hlm_imports(argv, watched=("sklearn", "scipy", "torch"))
    assert (status, loaded) == (0, []), stderr[-2000:]


# verbs that write pages and figures from leaderboards: the machine a page was made on is read
# from /proc/cpuinfo (zoo.hardware.host), not from torch
# (small committed leaderboards: what is imported does not grow with the rows; the paper page
# from one suite's copy, its other claims not run)
PAGE_VERBS = [
    ["report", "cpu-encoder-probes", "--output-dir", "{tmp}"],
    ["report", "--paper", "--leaderboards", "{lb}", "--output-dir", "{tmp}"],
    ["plot", "cpu-encoder-probes", "--output-dir", "{tmp}/plots"],
]


@pytest.mark.parametrize("argv", PAGE_VERBS, ids=" ".join)
def test_verbs_that_write_pages_from_leaderboards_load_no_model_code(
    argv: list[str], tmp_path: Path
) -> None:
    lb = tmp_path / "lb"
    shutil.copytree(ROOT / "leaderboards" / "paper-cpu-throughput", lb / "paper-cpu-throughput")
    out = tmp_path / "out"
    status, loaded, stderr = hlm_imports([a.format(tmp=out, lb=lb) for a in argv])
    assert (status, loaded) == (0, []), stderr[-2000:]
    assert any(out.iterdir())
