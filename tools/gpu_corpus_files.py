"""The local files the suites' pretraining reads, relative to $HLM_DATA_ROOT, one per line.

    HLM_DATA_ROOT=../shared/data python tools/gpu_corpus_files.py suites/paper-gpu-*.yaml

What tools/gpu-pack.sh carries of the corpora: every file that a cell's `corpus` or
`validation` source names (a path, a folder or a glob, resolved as pretraining resolves it),
over every model, sweep point and seed of the suites given. A glob such as
`enwiki/AA/wiki_[0-9][0-9]` names whatever files match where it is read, and a run's key holds
the glob, not the files: so a GPU machine given fewer files than the suite reads here would
train on less text under the same key. Packing exactly this list keeps the two the same; where
they do not fit, gpu-pack stops instead of carrying a part.

A source that names no file, or a file outside $HLM_DATA_ROOT (the GPU machine unpacks the
carried data as its data root), is an error naming the suite and the source. Synthetic and Hub
sources name no file and are left out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.run.cells import expand
from harness.suite import load_suite
from zoo.data.corpus import data_root, local_files, source_kind, source_problem
from zoo.errors import UserError


def _files(suite: Path, source: str, root: Path) -> list[str]:
    """`source`'s files relative to `root`; an error where it names none outside the root."""
    if source_kind(source).files is None:  # synthetic or Hub: nothing to carry
        return []
    files = local_files(source)
    if not files:
        raise UserError(f"{suite}: corpus source {source!r}: {source_problem(source)}")
    out = []
    for f in files:
        try:
            out.append(f.resolve().relative_to(root).as_posix())
        except ValueError:
            raise UserError(
                f"{suite}: corpus source {source!r} names {f}, outside $HLM_DATA_ROOT ({root}): "
                "the GPU machine reads its data from the carried data root only"
            ) from None
    return out


def _sources(suite: Path) -> list[str]:
    """The distinct corpus and validation sources of the suite's pretrained cells, in order."""
    sources: dict[str, None] = {}
    for cell in expand(load_suite(suite)):
        if cell.pretrain is not None:  # None: an existing checkpoint, nothing pretrained
            sources.update(
                dict.fromkeys([*cell.pretrain.corpus, *(cell.pretrain.validation or [])])
            )
    return list(sources)


def corpus_files(suites: list[Path]) -> list[str]:
    """Every file the suites' pretraining reads, relative to the data root, sorted (each
    source resolved once, however many cells name it)."""
    root = data_root().resolve()
    return sorted(
        {f for suite in suites for src in _sources(suite) for f in _files(suite, src, root)}
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="+", type=Path, help="suite YAML files")
    args = parser.parse_args(argv)
    try:
        print("\n".join(corpus_files(args.suites)))
    except UserError as exc:
        print(f"gpu_corpus_files: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
