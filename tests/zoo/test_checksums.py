"""`zoo.checksums`: a file's digest is its bytes' sha256, read again once the file changes,
and a reader's digest is of what it makes of the file."""

from __future__ import annotations

import hashlib
from pathlib import Path

from zoo.checksums import (
    contents_digest,
    file_sha256,
    sha256_of,
    short_digest,
    short_digests,
    text_digest,
)


def test_a_files_digest_is_its_sha256_and_follows_an_edit(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("one\n")
    assert file_sha256(f) == sha256_of(f) == hashlib.sha256(b"one\n").hexdigest()
    assert short_digest(f) == file_sha256(f)[:16]
    f.write_text("two, longer\n")  # remembered by size and mtime: an edit is read anew
    assert file_sha256(f) == hashlib.sha256(b"two, longer\n").hexdigest()


def test_a_file_not_there_has_no_digest(tmp_path: Path) -> None:
    (tmp_path / "here").write_text("x")
    digests = short_digests({"here": tmp_path / "here", "gone": tmp_path / "gone"})
    assert digests == {"here": hashlib.sha256(b"x").hexdigest()[:16], "gone": None}


def _first_word(path: Path) -> str:
    return path.read_text().split()[0]


def test_a_readers_digest_is_of_what_it_reads(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("same words here\n")
    b.write_text("same other words\n")
    assert contents_digest(a, _first_word) == contents_digest(b, _first_word) == text_digest("same")
    assert contents_digest(a, Path.read_text) != contents_digest(b, Path.read_text)
