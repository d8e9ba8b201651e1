"""Text from data, escaped where it lands: one function per target.

    f"| {md_cell(model)} | {value} |"      # a Markdown table cell
    f"## {md_heading(scale)}"              # a Markdown heading
    print(terminal(run_name))              # a line a terminal shows
    control_in(suite_data)                 # a name at its source: no control characters

A model, arm, preset, language, corpus or repository name comes from a suite, a claims file
or a checkpoint someone sent. Written raw, a newline in it leaves its table row and becomes a
heading (or a fake front matter); a terminal escape clears the screen or sets the title. So
names are refused at their source when they hold a control character (`control_in`, for a
suite, a claims file, a checkpoint's metadata), and every writer escapes for its target all
the same. HTML goes through
`html.escape`; YAML front matter through a YAML emitter (`yaml.safe_dump`, or the Hub's card
data), never through string formatting.
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL; a tab counts (it shifts columns), as do line and paragraph
# separators (U+2028, U+2029), which Markdown and terminals read as breaks
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_MD_SPECIAL = re.compile(r"([\\|])")


def has_control(text: str) -> bool:
    """Whether `text` holds a control character (a newline, an escape, a tab, ...)."""
    return _CONTROL.search(text) is not None


def visible(text: str) -> str:
    """Every control character as its Python escape (`\\n`, `\\x1b`): one printable line."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def terminal(text: str) -> str:
    """A name for a terminal: control characters shown as escapes, never sent raw."""
    return visible(text)


def md_cell(text: object) -> str:
    """`text` as one Markdown table cell: one line, `|` and `\\` escaped, `<` as `&lt;` (no
    raw HTML from a name)."""
    return _MD_SPECIAL.sub(r"\\\1", visible(str(text))).replace("<", "&lt;")


def md_code(text: object) -> str:
    """`text` as inline code in a table cell: one line, no backtick to close it early, and
    `|` escaped (GitHub splits cells on it even inside code)."""
    return visible(str(text)).replace("`", "'").replace("|", "\\|")


def md_heading(text: object) -> str:
    """`text` as a Markdown heading's words: one line, no raw HTML, `\\` escaped."""
    return md_cell(text)


def control_in(data: object, free_text: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """The first (key path, string) of `data` (nested mappings and lists, keys included)
    holding a control character, or None. Values under a key of `free_text` (a description,
    the paper's own words) may span lines; a tab or an escape is refused there too."""
    todo: list[tuple[str, object, bool]] = [("<root>", data, False)]
    while todo:
        where, value, free = todo.pop()
        if isinstance(value, str):
            text = value.replace("\n", "") if free else value
            if has_control(text):
                return where, value
        elif isinstance(value, dict):
            for key, child in value.items():
                if isinstance(key, str) and has_control(key):
                    return where, key
                path = key if where == "<root>" else f"{where}.{key}"
                todo.append((path, child, free or key in free_text))
        elif isinstance(value, list):
            todo += [(f"{where}[{i}]", child, free) for i, child in enumerate(value)]
    return None
