"""`hlm validate SUITE...`: every key, registry name, path and sweep value of suites, checked
without computing anything; one line per problem (FILE: KEY: message), status 2 if any.

    hlm validate suites/*.yaml
"""

from __future__ import annotations

import argparse
import sys

from harness.cli.flags import add_max_cells, add_trust


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Load and validate suites: every key, registry name, path and sweep value. "
        "Prints one line per problem (FILE: KEY: message); exit status 2 if any. Validating "
        "imports the suite's plugin files, which runs their code: only with --trust-plugins "
        "(which also lets an lm_eval task folder's YAMLs run code through their !function "
        "hooks); a suite with neither needs no flag."
    )
    p.add_argument(
        "suites", nargs="+", metavar="SUITE", help="suite YAML paths or names under suites/"
    )
    add_trust(p)
    add_max_cells(p)


def run(args: argparse.Namespace) -> int:
    from harness.run.cells import expand, moved_shared_data, short_warm_ups
    from harness.suite import SuiteError, expand_suite_refs, load_suite
    from zoo.registry import trusting

    problems: list[str] = []
    with trusting(args.trust_plugins):
        for path in expand_suite_refs(args.suites):
            try:
                suite = load_suite(path, args.max_cells)
                cells = expand(suite)
                sizes = {"model": len(suite.models), "task": len(suite.tasks), "cell": len(cells)}
                said = ", ".join(f"{n} {w}" + "s" * (n != 1) for w, n in sizes.items())
                print(f"{path}: ok ({said})")
                for moved in moved_shared_data(cells):
                    print(f"  {moved}")
                for why in short_warm_ups(cells):
                    print(f"WARNING {path}: {why}", file=sys.stderr)
            except SuiteError as exc:
                problems += exc.problems
    for p in problems:
        print(p, file=sys.stderr)
    return 2 if problems else 0
