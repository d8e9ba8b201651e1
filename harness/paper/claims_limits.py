"""What a claims file may hold, checked on its raw YAML before any claim is validated.

    data = read_yaml_mapping(path, "claims")
    check_raw(data, path)          # counts within bounds, names one printable line each

A claims file may come from anyone. Its scales and claims are counted before pydantic
validates them (5,000 claims took seconds to validate only to be refused; 3,000 `like`
scales, minutes to judge), and every name in it is one line with no control character (a
newline in an arm's name broke out of the page's table row into a heading). Prose (the
paper's own words, a setting, a reason) may span lines in the file; `one_paragraph` joins it
into one, so a bullet or a cell holds it whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zoo.errors import UserError
from zoo.text import control_in, visible

# bounds checked before anything is judged: the paper's file has 43 claims at 5 scales (122
# declared); 5,000 claims or 3,000 scales ran for minutes before these
MAX_SCALES = 32
MAX_CLAIMS_PER_SCALE = 256
MAX_DECLARED = 1024  # claims at every scale, those of `like` scales counted at each
MAX_MAPPED = 256  # suites or models a `like` scale maps
# keys whose text may span lines (YAML's folded prose); every other string is one line
FREE_TEXT = frozenset(
    {"paper", "stated", "setting", "differs", "unavailable", "pending", "what", "why"}
)


def check_raw(data: dict[str, Any], path: Path) -> None:
    """The bounds and the one-line names of a claims file's raw data, each failure one
    UserError naming the file and the key."""
    _count(data, path)
    found = control_in(data, FREE_TEXT)
    if found is not None:  # a newline in a name would break out of the page's table row
        where, text = found
        raise UserError(f"{path}: {where}: {visible(text)[:80]!r} holds a control character")


def _count(data: dict[str, Any], path: Path) -> None:
    """Scales and claims counted before any is validated (5,000 claims took seconds to
    validate only to be refused): the bounds' errors, said early."""
    scales = data.get("scales")
    if not isinstance(scales, list):
        return  # validation names it
    if len(scales) > MAX_SCALES:
        raise UserError(f"{path}: scales: {len(scales)} scales; at most {MAX_SCALES}")
    for i, scale in enumerate(scales):
        claims = scale.get("claims") if isinstance(scale, dict) else None
        if isinstance(claims, list) and len(claims) > MAX_CLAIMS_PER_SCALE:
            raise UserError(
                f"{path}: scales[{i}].claims: {len(claims)} claims; at most "
                f"{MAX_CLAIMS_PER_SCALE} a scale"
            )


def one_paragraph(text: str) -> str:
    """Prose of a claims file as one paragraph: its line breaks and runs of spaces as one
    space, so that a page's bullet or cell holds it whole (a line starting `#` inside it
    would otherwise become a heading)."""
    return " ".join(text.split())
