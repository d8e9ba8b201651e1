"""Copy WordNet's four data files keeping, of each synset line, only what the synonyms task reads.

    python tools/trim_wordnet.py ../shared/data/wordnet OUT/wordnet

What tools/gpu-pack.sh carries for the synonyms task (Appendix A): `harness.downstream.wordnet`
reads, of each line of `data.{noun,verb,adj,adv}`, the synset's head (`offset lex_filenum
ss_type w_cnt`) and its `w_cnt` (word, lex_id) pairs; the pointers, verb frames and the gloss
after them are never read, and are about three quarters of the files once compressed (xz:
4.8 MB for the four files, 1.2 MB trimmed). The trimmed line keeps those fields as they are,
so the folder gives the same synonym pairs (`synonym_pairs`). The licence header (lines
starting with two spaces) and the LICENSE file are copied unchanged. Lines keep their order;
byte offsets, which the task does not use, no longer point at the lines.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from harness.downstream.wordnet import POS  # the data files the synonyms task reads


def trim_line(line: str) -> str:
    """A synset line cut after its last (word, lex_id) pair; a header line as it is."""
    if not line or line.startswith("  "):
        return line
    fields = line.split(" ")
    count = int(fields[3], 16)
    return " ".join(fields[: 4 + 2 * count])


def trim(source: Path, target: Path) -> list[Path]:
    """`source`'s data files, trimmed, and its LICENSE into `target`; the files written."""
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for pos in POS:
        src = source / f"data.{pos}"
        if not src.is_file():
            raise SystemExit(f"trim_wordnet: {src}: not found (a WordNet 3.0 database folder)")
        lines = src.read_text(encoding="latin-1").splitlines()
        out = target / src.name
        out.write_text("".join(trim_line(line) + "\n" for line in lines), encoding="latin-1")
        written.append(out)
    if (source / "LICENSE").is_file():
        written.append(Path(shutil.copy2(source / "LICENSE", target / "LICENSE")))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a WordNet 3.0 database folder")
    parser.add_argument("target", type=Path, help="the folder to write (created)")
    args = parser.parse_args(argv)
    files = trim(args.source, args.target)
    print(f"{args.target}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
