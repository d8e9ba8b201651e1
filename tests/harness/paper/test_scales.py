"""The report past the CPU scale (the paper file's mapped scales): each larger scale compares
the CPU parts' figures with the same tasks, metrics and gates; GPU rows get their own section
labelled with the GPU, their own power table, and a run label that says what was run; a
second machine's scale compares the CPU suites' speed and memory, measured again there."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from harness.paper.claims_file import findings, paper_claims
from harness.paper.document import headline, render, render_baselines
from harness.paper.scales import Scale
from harness.results.leaderboard import write_cell
from harness.suite import load_suite
from tests.harness.paper.rows import (
    PAPER,
    by_key,
    encoder_rows,
    paper_row,
    scale_named,
    source_of,
)

ROOT = Path(__file__).resolve().parents[3]
GPU, AMD_EPYC = scale_named("GPU"), scale_named("CPU, AMD EPYC")


@pytest.mark.parametrize(
    "scale", [s for s in paper_claims().mappings() if not s.machine], ids=lambda s: s.name
)
def test_each_larger_scale_compares_the_encoder_and_decoder_figures(scale: Scale) -> None:
    """Every scale past the CPU one compares the CPU parts' figures it has suites for, with the
    same tasks, metrics and gates, between models its own suites train."""
    for fig in PAPER:
        cpu = source_of(fig)
        big = scale.source(cpu)
        if cpu.suite not in scale.suites:
            assert big is None, fig.key  # the sweeps, XNLI, the ablation: CPU only
            continue
        assert big is not None and big.suite == scale.suites[cpu.suite]
        assert (big.task, big.metric, big.at, big.checks) == (
            cpu.task,
            cpu.metric,
            cpu.at,
            cpu.checks,
        )
        trained = {m.label() for m in load_suite(ROOT / "suites" / f"{big.suite}.yaml").models}
        assert set(big.roles.values()) <= trained, fig.key
        presets = tuple(f"{p}-" for p in scale.models.values())
        assert all(m.startswith(presets) for m in big.roles.values())


def _scale_part(page: str, scale: str) -> str:
    """The scales section's subsection of `scale` (what it waits for)."""
    return page.split(f"\n### {scale}\n")[1].split("\n## ")[0].split("\n### ")[0]


def _scale_row(page: str, scale: str) -> str:
    """The scales table's row of `scale`."""
    table = page.split("\n## Scales\n")[1]
    return next(line for line in table.splitlines() if line.startswith(f"| {scale} |"))


def test_gpu_rows_sit_beside_the_cpu_rows_labelled_with_the_gpu(tmp_path) -> None:
    pending = render(findings(encoder_rows(tmp_path / "cpu", sst2_ce=0.78, gain=0.02)))
    assert _scale_part(pending, "GPU").endswith(GPU.pending + "\n")  # nothing run yet
    h100 = "cuda x1: NVIDIA H100 80GB HBM3"
    root = encoder_rows(tmp_path / "gpu", 0.78, -0.03, "paper-gpu-encoder", hardware=h100)
    encoder_rows(root, sst2_ce=0.78, gain=0.02)  # the CPU part beside it
    found = findings(root)
    gpu = by_key([f for f in found if f.scale == "GPU"], "table1-tokens: GLUE average")
    assert gpu.source.roles == {"vanilla": "bert-small-ce", "headless": "bert-small-cwt"}
    assert gpu.verdict == "contradicted"
    assert by_key(found, "table1-tokens: GLUE average").verdict == "reproduced"  # CPU's
    text = headline(found)
    assert text.startswith("At CPU scale, 28 of the paper's claims")  # the scale's declared claims
    assert (
        "At GPU scale, 14 of the paper's claims" in text
        and "of its 4 main claims, 2 contradicted" in text
    )
    page = render(found, root)
    assert _scale_row(page, "GPU").endswith(f"| {h100} |")
    table1 = page.split("## Table 1: GLUE at equal tokens")[1].split("\n## ")[0]
    assert "| GLUE average dev | GPU | 82.43 → 83.29 |" in table1
    assert "**contradicted** | headless worse, against the paper |" in table1
    assert "bert-small-cwt vs bert-small-ce (3000 steps each)" in table1
    assert "\n### GPU\n" not in page  # it has rows: nothing to wait for


def test_a_larger_scale_states_its_power_and_says_when_one_arm_has_rows(tmp_path) -> None:
    """A scale's inconclusive claims join the power table, labelled with the scale; one seed
    an arm has no test; a scale whose rows hold one arm only says so, not that it has none."""
    one = encoder_rows(tmp_path / "one", 0.78, 0.02, "paper-gpu-encoder", seeds=1)
    table1 = render(findings(one), one).split("## Table 1: GLUE at equal tokens")[1]
    row = next(x for x in table1.splitlines() if x.startswith("| GLUE average dev | GPU |"))
    assert "| - (one seed an arm) | **inconclusive** | no test: one seed an arm |" in row
    cwt = encoder_rows(
        tmp_path / "cwt", 0.78, 0.02, "paper-gpu-encoder", arms=("cwt",), hardware="cuda x1"
    )
    part = _scale_part(render(findings(cwt)), "GPU")
    assert "No claim has both arms' rows yet." in part and GPU.pending in part
    assert "No rows committed yet" not in part
    avg = by_key([f for f in findings(cwt) if f.scale == "GPU"], "table1-tokens: GLUE average")
    assert avg.verdict == "not comparable" and "gate failed" not in avg.reason
    assert avg.reason.startswith("no rows: the vanilla model bert-small-ce has no glue/average")


def test_a_scale_whose_vanilla_arm_alone_has_rows_shows_its_gates(tmp_path) -> None:
    """While the headless arm waits, the baselines page says whether the vanilla model's
    gates pass, so a reader knows whether the comparison will count."""
    ce = encoder_rows(
        tmp_path / "ce", 0.53, 0.0, "paper-gpu-encoder", arms=("ce",), hardware="cuda x1"
    )
    found = findings(ce)
    assert "No claim has both arms' rows yet." in _scale_part(render(found), "GPU")
    gates = render_baselines(found, None)
    sst2 = [x for x in gates.splitlines() if x.startswith("| glue/sst2 accuracy | GPU |")]
    assert len(sst2) == 1 and sst2[0].endswith(
        "| 0.5305 [0.5293, 0.5317] | 0.56 | -0.0295 | failed |"
    )
    stsb = [x for x in gates.splitlines() if x.startswith("| glue/stsb pearson | GPU |")]
    assert len(stsb) == 1 and stsb[0].endswith("| passed |")


def test_a_scale_says_which_of_its_suites_rows_were_filed_away(tmp_path) -> None:
    """Rows of cells a suite no longer has (`_superseded/`) are not compared, and the page says
    how many cells' rows sit there, so that a reader knows they exist."""
    from harness.results.leaderboard import write_current_cells

    ce = encoder_rows(
        tmp_path / "ce", 0.53, 0.0, "paper-gpu-encoder", arms=("ce",), hardware="cuda x1"
    )
    board = ce / "paper-gpu-encoder"
    assert "Filed away" not in _scale_part(render(findings(ce), ce), "GPU")
    files = sorted(board.glob("*.parquet"))
    cells = sorted({f.stem.split(".", 1)[0] for f in files})
    write_current_cells(board, cells[1:])  # the first cell is no longer the suite's
    part = _scale_part(render(findings(ce), ce), "GPU")
    assert "Filed away, not compared: cells of settings since changed" in part
    assert "(1 in `paper-gpu-encoder/_superseded/`)" in part


def test_a_second_machine_compares_the_speed_and_memory_figures_alone() -> None:
    """The AMD EPYC scale reads the CPU suites' speed and memory, measured again on that
    machine into `leaderboards/amd-epyc/<suite>/`, with the CPU scale's models; it compares no
    figure that needs pretraining, and its hint runs the measured task alone."""
    mine = {
        f.key: (AMD_EPYC.source(source_of(f)), source_of(f))
        for f in PAPER
        if AMD_EPYC.source(source_of(f))
    }
    assert {key.split(":")[0] for key in mine} == {"table6", "figure2", "figure6"}
    assert len(mine) == 6  # Table 6's three speeds, Figure 2's speed and memory, Figure 6's
    for key, (machine, cpu) in mine.items():
        assert machine is not None and machine.unit == "measurement", key
        assert replace(machine, machine="") == cpu, key
        assert machine.board == f"amd-epyc/{cpu.suite}" and cpu.board == cpu.suite
        assert machine.machine == "AMD EPYC" and not cpu.machine
    fig2 = next(m for k, (m, _) in mine.items() if k.startswith("figure2: training speed"))
    assert fig2 is not None and fig2.command == (
        "hlm run paper-cpu-throughput --task throughput --leaderboards leaderboards/amd-epyc"
    )


def _figure2_rows(board: Path, speedups: tuple[float, ...], machine: str) -> None:
    """Two side-by-side measurements per batch size (seeds 0 and 1, 0.001 apart): the
    claim "at every batch size" is tested at each."""
    rows = []
    for batch, speedup in zip((8, 16, 32, 64), speedups, strict=True):
        for seed in (0, 1):
            for model, value in (("bert-small-ce", 1.0), ("bert-small-cwt", speedup)):
                value += 0.001 * seed * (model == "bert-small-cwt")
                r = paper_row(model, "throughput", "speedup_vs_baseline", value, seed)
                sweep = json.dumps({"batch_size": batch})
                rows.append({**r, "sweep": sweep, "hardware": machine})
    write_cell(board, "rows", rows)


def test_a_second_machines_speeds_get_their_own_section_and_verdicts(tmp_path) -> None:
    """The same figure measured on two machines: each scale reads its own folder, names its
    machine and reaches its own verdict; until the second machine's rows are in, its
    section says how to measure them."""
    xeon, epyc = "cpu x1: Intel Xeon (AMX)", "cpu x1: AMD EPYC"
    _figure2_rows(tmp_path / "paper-cpu-throughput", (1.1, 0.95, 1.3, 0.9), xeon)
    command = "hlm run paper-cpu-throughput --task throughput --leaderboards leaderboards/amd-epyc"
    found = findings(tmp_path)
    part = _scale_part(render(found, tmp_path), "CPU, AMD EPYC")
    assert "No rows committed yet." in part and AMD_EPYC.pending in part
    waiting = by_key([f for f in found if f.scale == "CPU, AMD EPYC"], "figure2: training speed")
    assert waiting.reason == (
        f"no rows: nothing committed in leaderboards/amd-epyc/paper-cpu-throughput (`{command}`)"
    )
    epyc_board = tmp_path / "amd-epyc" / "paper-cpu-throughput"
    _figure2_rows(epyc_board, (1.38, 1.51, 1.39, 1.49), epyc)
    (epyc_board / "_plots").mkdir()
    (epyc_board / "_plots" / "bars-throughput.png").write_bytes(b"")  # as `hlm plot` names it
    found = findings(tmp_path)
    speed = "figure2: training speed"
    first = by_key([f for f in found if f.scale == "CPU"], speed)
    second = by_key([f for f in found if f.scale == "CPU, AMD EPYC"], speed)
    assert first.verdict == "inconclusive" and second.verdict == "reproduced"
    # the weakest batch size stands for "at every batch size": 0.38 (+0.0005, the mean)
    assert second.gain == pytest.approx(0.3805)
    assert (first.family, second.family) == (28, 6)  # each scale's declared claims
    page = render(found, tmp_path)
    assert _scale_row(page, "CPU").endswith(f"| {xeon} |")
    assert _scale_row(page, "CPU, AMD EPYC").endswith(f"| {epyc} |")
    figure2 = page.split("## Figure 2:")[1].split("\n## ")[0]
    assert "| CPU, AMD EPYC | stated below | 1 → 1.443 |" in figure2
    assert "`amd-epyc/paper-cpu-throughput`, `paper-cpu-throughput`." in figure2
    assert "[amd-epyc/paper-cpu-throughput: 1](../leaderboards/amd-epyc/" in figure2


def test_a_second_machines_folder_refuses_rows_run_on_another(tmp_path) -> None:
    """Rows written into the AMD EPYC folder on any other machine (a run given the wrong
    `--leaderboards`) are not compared there, and the reason names the machine they record."""
    board = tmp_path / "amd-epyc" / "paper-cpu-throughput"
    _figure2_rows(board, (1.38, 1.51, 1.39, 1.49), "cpu x1: Intel Xeon (AMX)")
    found = [f for f in findings(tmp_path) if f.scale == "CPU, AMD EPYC"]
    speed = by_key(found, "figure2: training speed")
    assert speed.verdict == "not comparable" and speed.family == 6  # declared, not tested
    assert speed.reason == (
        "not the machine compared: leaderboards/amd-epyc/paper-cpu-throughput holds rows run "
        "on cpu x1: Intel Xeon (AMX), where each should record an AMD EPYC"
    )
