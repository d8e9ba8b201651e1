"""Rewrite a wheel without the files under some of its folders, its RECORD made anew.

    python tools/slim_wheel.py WHEEL --drop-subfolders lm_eval/tasks

What tools/gpu-pack.sh does to lm-eval's wheel: of its 9 MB, nearly all is the 15,000 files
of the task folders under `lm_eval/tasks/` (one per benchmark: MMLU, BBH, ...), which the
paper-gpu suites never read. They evaluate the tasks shipped in `harness/lm_eval_tasks/`,
through `TaskManager(include_path=...)`, and lm-eval's own modules directly in
`lm_eval/tasks/` (`__init__.py`, `manager.py`, ...) are kept. So the wheel travels at about a
tenth of its size, leaving room in the GPU machine's 64 MiB for more corpus.

`--drop-subfolders FOLDER` drops every file in a subfolder of FOLDER and keeps the files
directly in it. The wheel is rewritten in place, under its own name (pip reads the name,
version and tags from it), with the RECORD listing each kept file's sha256 and size as the
wheel format asks, so `pip install` checks the slim wheel as it checks any other. A folder
that is not in the wheel is an error, not a wheel rewritten unchanged.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import sys
import zipfile
from pathlib import Path


def _dropped(name: str, folders: list[str]) -> bool:
    """Whether `name` lies in a subfolder of one of `folders` (not directly in it)."""
    for folder in folders:
        prefix = folder.rstrip("/") + "/"
        if name.startswith(prefix) and "/" in name[len(prefix) :]:
            return True
    return False


def _record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def _record_name(names: list[str]) -> str:
    records = [n for n in names if n.endswith(".dist-info/RECORD") and n.count("/") == 1]
    if len(records) != 1:
        raise SystemExit(f"slim_wheel: expected one *.dist-info/RECORD, found {records or 'none'}")
    return records[0]


def slim(wheel: Path, folders: list[str]) -> tuple[int, int]:
    """Rewrite `wheel` without the files in subfolders of `folders`; (files kept, dropped)."""
    with zipfile.ZipFile(wheel) as zin:
        infos = zin.infolist()
        names = [i.filename for i in infos]
        record = _record_name(names)
        missing = [f for f in folders if not any(n.startswith(f.rstrip("/") + "/") for n in names)]
        if missing:
            raise SystemExit(f"slim_wheel: {wheel.name} has no folder {', '.join(missing)}")
        kept = [i for i in infos if not _dropped(i.filename, folders) and i.filename != record]
        contents = {i.filename: zin.read(i) for i in kept}
    lines = [_record_line(i.filename, contents[i.filename]) for i in kept]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([*lines, [record, "", ""]])
    tmp = wheel.with_suffix(".slim-tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        for info in kept:
            zout.writestr(info, contents[info.filename], zipfile.ZIP_DEFLATED, 9)
        zout.writestr(record, out.getvalue(), zipfile.ZIP_DEFLATED, 9)
    tmp.replace(wheel)
    return len(kept), len(infos) - 1 - len(kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="the .whl file, rewritten in place")
    parser.add_argument(
        "--drop-subfolders",
        nargs="+",
        required=True,
        metavar="FOLDER",
        help="drop every file in a subfolder of FOLDER (a path inside the wheel); keep "
        "the files directly in it",
    )
    args = parser.parse_args(argv)
    if not args.wheel.is_file():
        raise SystemExit(f"slim_wheel: {args.wheel}: not found")
    before = args.wheel.stat().st_size
    kept, dropped = slim(args.wheel, args.drop_subfolders)
    print(
        f"{args.wheel.name}: {kept} files kept, {dropped} dropped; "
        f"{before / 2**20:.1f} -> {args.wheel.stat().st_size / 2**20:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
