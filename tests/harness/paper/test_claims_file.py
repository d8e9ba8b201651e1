"""`hlm report --claims FILE`: a claims file that is not the paper's, judged from rows of the
quickstart suite, with its own family per scale; bad files refused by file and key."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.paper.claims_file import PAPER_CLAIMS, load_claims, paper_claims
from harness.paper.claims_page import (
    judge_claims,
    own_claims,
    own_claims_section,
    write_claims_page,
)
from harness.paper.findings import family_sizes
from harness.results.leaderboard import write_cell
from tests.harness.paper.rows import paper_row
from zoo.errors import UserError

ROOT = Path(__file__).parents[3]

CLAIMS = """\
name: quickstart
paper: "CWT lowers the validation loss of tiny decoders"
scales:
  - name: tiny
    claims:
      - id: val-loss
        quantity: validation cross-entropy, decoders
        suite: quickstart
        task: validation
        metric: val_ce
        arms: {vanilla: pythia-tiny-ce, headless: pythia-tiny-cwt}
        direction: better
        gates: [{task: validation, type: validation}]
      - id: val-loss-paper
        quantity: validation cross-entropy, as the paper's numbers
        suite: quickstart
        task: validation
        metric: val_ce
        arms: {vanilla: pythia-tiny-ce, headless: pythia-tiny-cwt}
        paper: {vanilla: 3.2, headless: 3.0}
      - id: speed
        quantity: tokens per second, exploratory
        suite: quickstart
        task: validation
        metric: val_ppl
        arms: {vanilla: pythia-tiny-ce, headless: pythia-tiny-cwt}
        confirmatory: false
"""


def _declare(path: Path, text: str, when: str = "2025-12-01T00:00:00Z") -> Path:
    """`text` as the claims file `path`, committed in a git repository at its folder on date
    `when` (default: before the test rows, stamped from 2099-01-01)."""
    repo = path.parent
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env = {**os.environ, **who, "GIT_COMMITTER_EMAIL": "t@t", "GIT_COMMITTER_DATE": when}
    env["GIT_AUTHOR_DATE"] = when
    if not (repo / ".git").exists():
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path.write_text(text)
    for args in (["add", path.name], ["commit", "-qm", "declare"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    return path


def _rows(root: Path, gain: float) -> Path:
    """Three seeds of the quickstart decoders: cwt's validation CE lower by `gain`."""
    rows = []
    for seed in range(3):
        for model, ce in (("pythia-tiny-ce", 5.0), ("pythia-tiny-cwt", 5.0 - gain)):
            ce += 0.001 * seed * (model == "pythia-tiny-cwt")
            rows += [
                paper_row(model, "validation", "val_ce", ce, seed),
                paper_row(model, "validation", "val_ppl", 150.0, seed),
                paper_row(model, "validation", "unigram_ppl", 1000.0, seed),
            ]
    write_cell(root / "quickstart", "rows", [{**r, "suite": "quickstart"} for r in rows])
    return root


def test_a_claims_file_is_judged_with_its_own_family(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    _declare(path, CLAIMS)
    _, found = judge_claims(path, _rows(tmp_path / "lb", gain=0.3))
    assert [f.figure.claim for f in found] == ["val-loss", "val-loss-paper", "speed"]
    loss, paper, speed = found
    assert loss.family == paper.family == 2 and loss.alpha == 0.05 / 2
    assert loss.verdict == paper.verdict == "reproduced"
    assert loss.gain == pytest.approx(0.299)  # lower is better: a positive gain
    assert speed.verdict is None and speed.family == 1
    worse = judge_claims(path, _rows(tmp_path / "worse", gain=-0.3))[1]
    assert worse[0].verdict == "contradicted"


def test_claims_grouped_in_sections_need_no_headings(tmp_path: Path) -> None:
    """A claim's `section` groups it on the page; a file without `sections:` (no headings)
    is judged as one with them, each claim under its section's name."""
    path = tmp_path / "claims.yaml"
    grouped = CLAIMS.replace("- id: val-loss\n", "- id: val-loss\n        section: loss\n", 1)
    _declare(
        path,
        grouped.replace("- id: val-loss-paper\n", "- id: val-loss-paper\n        section: loss\n"),
    )
    _, found = judge_claims(path, _rows(tmp_path / "lb", gain=0.3))
    assert [f.figure.claim for f in found] == ["loss", "loss", "speed"]
    assert found[0].verdict == "reproduced"


def test_hlm_report_claims_writes_the_page(tmp_path: Path, capsys) -> None:
    path = tmp_path / "claims.yaml"
    _declare(path, CLAIMS)
    root = _rows(tmp_path / "lb", gain=0.3)
    assert hlm(["report", "--claims", str(path), "--leaderboards", str(root)]) == 0
    page = (root / "quickstart-claims.md").read_text()
    assert page.startswith("# Claims of `quickstart`, judged")
    assert (
        "| val-loss | tiny | pythia-tiny-cwt | pythia-tiny-ce | pythia-tiny-cwt better than "
        "pythia-tiny-ce, as stated |"
    ) in page
    assert "Confirmatory claims per scale (the families): tiny: 2." in page
    assert "- **val-loss** (tiny): confirmatory: declared " in page
    said = capsys.readouterr().out
    assert (
        str(root / "quickstart-claims.md") in said and str(root / "quickstart-claims.svg") in said
    )
    assert "\n![Each claim's Δ and interval, by metric](quickstart-claims.svg)\n" in page
    svg = (root / "quickstart-claims.svg").read_text()
    assert ">val-loss-paper<" in svg and ">val_ce<" in svg  # a claim's row, its metric's panel
    assert hlm(["report", "--claims", str(path), "--leaderboards", str(root)]) == 0
    assert (root / "quickstart-claims.svg").read_text() == svg  # the same rows, the same bytes
    assert hlm(["report", "--claims", str(path), "--leaderboards", str(tmp_path / "none")]) == 0
    assert not (tmp_path / "none" / "quickstart-claims.svg").exists()  # no Δ: no figure
    assert "![" not in (tmp_path / "none" / "quickstart-claims.md").read_text()


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            ("metric: val_ce\n        arms", "metric: val_cee\n        arms"),
            "did you mean 'val_ce'",
        ),
        (("        direction: better\n", ""), "none is assumed"),
        (("type: validation}", "type: validaton}"), "unknown task type 'validaton'"),
        (("direction: better\n", "direction: better\n        design: trend\n"), "need `at: sweep`"),
        (("suite: quickstart\n", "suite: ../x\n", 1), "scales[0].claims[0].suite"),
        # a name holding a control character, refused at its source
        (("vanilla: pythia-tiny-ce", 'vanilla: "pythia-tiny-ce\\n# x"', 1), "arms.vanilla: "),
        (("name: tiny", 'name: "tiny\\x1b[2J"'), "scales[0].name: "),
        # a scale's name is shown in headings and sentences: no Markdown from a file
        (("name: tiny", 'name: "tiny [x](http://e)"'), "scales[0].name: "),
        (("task: validation\n", 'task: "validation\\r"\n', 1), "claims[0].task: "),
    ],
)
def test_a_bad_claims_file_is_refused_by_file_and_key(
    tmp_path: Path, edit: tuple, said: str
) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text(CLAIMS.replace(*edit))
    with pytest.raises(UserError) as err:
        load_claims(path)
    assert str(path) in str(err.value) and said in str(err.value), str(err.value)


@pytest.mark.parametrize("claims", own_claims(), ids=lambda p: p.name)
def test_each_committed_claims_page_is_what_the_command_makes(
    tmp_path: Path, monkeypatch, claims: Path
) -> None:
    """leaderboards/<name>-claims.md: `hlm report --claims suites/claims/<file>` over the
    committed rows, byte for byte, for each of our own claims files."""
    monkeypatch.chdir(ROOT)
    for out in write_claims_page(claims.relative_to(ROOT), Path("leaderboards"), tmp_path):
        assert out.read_bytes() == (ROOT / "leaderboards" / out.name).read_bytes(), out.name


def test_our_own_questions_sit_on_the_paper_page_as_ours(tmp_path: Path) -> None:
    """Each of our claims files: a line on the paper's page, under a heading that says they
    are not the paper's claims, linking its page and tallying its answers; under it, each
    confirmatory claim's answer with its Δ and interval, their level and seeds said once
    (the exploratory one stays on its page)."""
    path = tmp_path / "claims.yaml"
    _declare(path, CLAIMS)
    lines = own_claims_section(_rows(tmp_path / "lb", gain=0.3), [path])
    assert "## Our own questions (not the paper's claims)" in lines
    assert "Our measurements, not the paper's; each file is a family of its own." in lines
    assert lines[-3:] == [
        "- [quickstart](../leaderboards/quickstart-claims.md): 3 claims; as stated: "
        "val-loss, val-loss-paper; exploratory: 1; intervals at 97.5 %, 3 seeds.",
        *(
            f"  - {ident}: pythia-tiny-cwt better than pythia-tiny-ce, as stated; "
            "Δ 0.299 [0.2954, 0.3026]"
            for ident in ("val-loss", "val-loss-paper")
        ),
    ]
    worse = own_claims_section(_rows(tmp_path / "worse", gain=-0.3), [path])[-3]
    assert "against the claim: val-loss, val-loss-paper" in worse
    missing = own_claims_section(tmp_path / "none", [path])
    assert missing[-3].endswith(": 3 claims; exploratory: 1; untestable: 2."), missing
    assert missing[-1] == "  - val-loss-paper: untestable: not run"
    assert own_claims_section(tmp_path, []) == []
    assert PAPER_CLAIMS not in own_claims() and own_claims()  # ours, never the paper's


MAPPED = """\
  - name: small
    like: tiny
    suites: {quickstart: quickstart-small}
    models: {pythia-tiny: pythia-70m}
"""


def test_a_later_scale_maps_the_first_ones_suites_and_presets(tmp_path: Path) -> None:
    """A scale `like` another compares its claims on its own suite and presets, with the same
    tasks, metrics and gates, in a family of its own."""
    path = tmp_path / "claims.yaml"
    path.write_text(CLAIMS + MAPPED)
    declared = load_claims(path).declared()
    small = [(fig, source) for scale, fig, source in declared if scale == "small"]
    tiny = [(fig, source) for scale, fig, source in declared if scale == "tiny"]
    assert len(small) == len(tiny) == 3
    for (fig, big), (same, base) in zip(small, tiny, strict=True):
        assert fig == same and big.suite == "quickstart-small"
        assert big.roles == {"vanilla": "pythia-70m-ce", "headless": "pythia-70m-cwt"}
        assert (big.task, big.metric, big.checks) == (base.task, base.metric, base.checks)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (CLAIMS + MAPPED.replace("like: tiny", "like: huge"), "names no earlier scale"),
        (CLAIMS + MAPPED.replace("{pythia-tiny: pythia-70m}", "{bert-tiny: x}"), "no preset"),
        (CLAIMS + MAPPED.replace("    like: tiny\n", ""), "claims: empty"),
        (CLAIMS + "main: [{claim: nope, arm: headless}]\n", "main: nope"),
        (CLAIMS.replace("        direction: better\n", "        at: equal-time\n", 1), "speed"),
    ],
)
def test_a_bad_scale_or_main_claim_is_refused(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_claims(path)
    assert str(path) in str(err.value) and said in str(err.value), str(err.value)


@pytest.mark.parametrize("path", sorted((ROOT / "suites" / "claims").glob("*.yaml")), ids=str)
def test_every_shipped_claims_file_loads(path: Path) -> None:
    assert load_claims(path).declared()


def test_the_paper_is_data_with_its_families_declared() -> None:
    """The paper's claims come from suites/claims/paper.yaml alone: its families per scale,
    its main claims and its numbers are the file's (Table 1's GLUE average at equal tokens)."""
    paper = load_claims(PAPER_CLAIMS)
    assert paper is paper_claims() or paper == paper_claims()
    sizes = family_sizes(paper.declared())
    assert sizes == {
        "CPU": 28, "CPU, English Wikipedia": 14, "GPU": 14, "GPU, bert-medium": 4,
        "CPU, AMD EPYC": 6,
    }  # fmt: skip
    first = paper.scales[0].claims
    average = next(c for c in first if c.id == "t1-tokens-average")
    assert average.paper == {"vanilla": 82.43, "headless": 83.29} and average.percent
    assert paper.main[0].claim == "t1-tokens-average"


def _many_claims(n: int) -> str:
    head, claim = CLAIMS.split("    claims:\n")[0], CLAIMS.split("    claims:\n")[1]
    one = claim.split("      - id: val-loss-paper")[0]
    body = "".join(one.replace("id: val-loss", f"id: c{i}") for i in range(n))
    return head + "    claims:\n" + body


def _many_scales(n: int, first: str = CLAIMS) -> str:
    return first + "".join(MAPPED.replace("name: small", f"name: s{i}") for i in range(n))


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (_many_claims(5000), "at most 256"),
        (_many_scales(3000), "at most 32"),
        (_many_scales(31, _many_claims(200)), "more than 1024"),
    ],
    ids=["5000 claims", "3000 like scales", "32 scales of 200 claims"],
)
def test_a_claims_file_is_counted_and_bounded_before_judging(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_claims(path)
    assert str(path) in str(err.value) and said in str(err.value), str(err.value)[:300]


def test_prose_spanning_lines_is_one_paragraph_on_the_page(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    stated = "        stated: |\n          It is better.\n          # not a heading\n"
    path.write_text(
        CLAIMS.replace("        direction: better\n", "        direction: better\n" + stated, 1)
    )
    claim = load_claims(path).scales[0].claims[0]
    assert claim.stated == "It is better. # not a heading"


def test_a_claim_committed_after_its_rows_is_exploratory(tmp_path: Path) -> None:
    """Whatever the file says, git decides: committed after the rows (stamped 2099-01-01),
    or edited since its commit, a claim is judged and shown as exploratory."""
    path = _declare(tmp_path / "claims.yaml", CLAIMS, when="2099-06-01T00:00:00Z")
    root = _rows(tmp_path / "lb", gain=0.3)
    found = judge_claims(path, root)[1]
    assert [f.verdict for f in found] == [None, None, None]
    assert hlm(["report", "--claims", str(path), "--leaderboards", str(root)]) == 0
    page = (root / "quickstart-claims.md").read_text()
    assert "exploratory: declared " in page and "not before its first row (2099-01-01" in page
    assert "Confirmatory claims per scale (the families): tiny: 0." in page
    fresh = _declare(tmp_path / "b" / "claims.yaml", CLAIMS)  # before the rows: confirmatory
    assert judge_claims(fresh, root)[1][0].verdict == "reproduced"
    fresh.write_text(
        CLAIMS.replace("metric: val_ce\n        arms", "metric: val_ppl\n        arms", 1)
    )
    edited = judge_claims(fresh, root)[1]  # changed since declared: its clock starts again
    assert edited[0].verdict is None and edited[1].verdict == "reproduced"


def test_the_readme_names_only_questions_declared_before_their_rows(tmp_path: Path) -> None:
    """The README's own-questions sentence: a file committed before its rows, with its
    answers; a file committed after them (all exploratory) is left out; none: no sentence."""
    from harness.paper.claims_page import own_headline

    root = _rows(tmp_path / "lb", gain=0.3)
    early = _declare(tmp_path / "a" / "claims.yaml", CLAIMS)
    late = _declare(tmp_path / "b" / "claims.yaml", CLAIMS, when="2099-06-01T00:00:00Z")
    assert own_headline(root, [early, late]) == (
        "Our own pre-registered questions: quickstart (CWT lowers the validation loss of tiny "
        "decoders): 3 claims; as stated: val-loss, val-loss-paper; exploratory: 1."
    )
    assert own_headline(root, [late]) == ""


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (("suite: quickstart\n", "suite: quickstrat\n", 1), "did you mean 'quickstart'"),
        (("headless: pythia-tiny-cwt}", "headless: pythia-tiny-cwtt}", 1), "arms.headless"),
        (("headless: pythia-tiny-cwt}", "headless: pythia-tiny-ce}", 1), "is its baseline"),
        (("metric: val_ce\n", "metric: val_loss\n", 1), "compares only within one objective"),
        (("direction: better", "direction: worse"), None),  # no numbers: nothing contradicts
        (("paper: {vanilla: 3.2, headless: 3.0}", "paper: {vanilla: 3.2, headless: 3.0}\n"
          "        direction: worse"), "the paper's numbers give headless 3.0"),
    ],
)  # fmt: skip
def test_a_claims_file_is_judged_as_strictly_as_a_leaderboard(
    tmp_path: Path, edit: tuple, said: str | None
) -> None:
    """Each mis-specified claim is refused in one line naming the file and the claim."""
    path = tmp_path / "claims.yaml"
    path.write_text(CLAIMS.replace(*edit))
    if said is None:
        assert load_claims(path)
        return
    with pytest.raises(UserError) as err:
        load_claims(path)
    assert str(path) in str(err.value) and said in str(err.value), str(err.value)


def test_a_file_of_only_exploratory_claims_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    text = CLAIMS.replace("        direction: better\n", "        confirmatory: false\n")
    text = text.replace(
        "        paper: {vanilla: 3.2, headless: 3.0}\n", "        confirmatory: false\n"
    )
    path.write_text(text)
    with pytest.raises(UserError, match="every one is exploratory"):
        load_claims(path)


def test_the_verdict_page_says_how_equal_time_was_read() -> None:
    """The committed verdict's page: each equal-time claim with the ratio it was read at and
    the check at each seed's own training-loop ratio; a claim at equal tokens needs neither."""
    page = (ROOT / "leaderboards" / "cpu-operating-point-claims.md").read_text()
    section = page.split("## How it was read\n")[1].split("## Method")[0]
    for ident in ("cwt-beats-ce-probe-time", "cwt-beats-ce-blimp-time"):
        assert f"- {ident}: equal time from the speed ratio " in section
    assert section.count("at each seed's own training-loop ratio instead (") == 2
    assert "cwt-beats-ce-probe-tokens" not in section
    # the paper page's answer line carries the same check beside the verdict
    doc = (ROOT / "docs" / "REPRODUCTION.md").read_text()
    (line,) = [x for x in doc.splitlines() if x.startswith("  - cwt-beats-ce-probe-time: ")]
    assert "; at each seed's own training-loop ratio instead (" in line
