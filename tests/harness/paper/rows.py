"""Leaderboard rows for the reproduction report's tests: one row of a paper suite, seeds of an
encoder pair along pretraining (with the side-by-side speed ratio the equal-time comparison
reads), and a decoder pair's validation and LAMBADA rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness.paper.claims_file import paper_claims
from harness.paper.figures import PaperFigure
from harness.paper.scales import Scale
from harness.paper.sources import Source
from harness.results.leaderboard import write_cell
from tests.harness.results.test_leaderboard import row

# rows dated after every declaration in git (the far future): the committed paper's claims
# are confirmatory on them (`harness.paper.preregistration`)
T0 = datetime(2099, 1, 1, tzinfo=UTC)
# the paper's claims file at its first scale (CPU): each figure and our source of it
CPU_CLAIMS: tuple[tuple[PaperFigure, Source], ...] = tuple(
    (fig, source) for scale, fig, source in paper_claims().declared() if scale == "CPU"
)
PAPER: tuple[PaperFigure, ...] = tuple(fig for fig, _ in CPU_CLAIMS)


def source_of(fig: PaperFigure) -> Source:
    """Our source of `fig` at CPU scale."""
    return next(source for f, source in CPU_CLAIMS if f == fig)


def scale_named(name: str) -> Scale:
    """The paper file's scale `name`, mapped from the CPU one."""
    return next(s for s in paper_claims().mappings() if s.name == name)


def paper_row(
    model: str, task: str, metric: str, value: float, seed: int, step: int = 3000
) -> dict:
    """`row` of the leaderboard tests as a paper-cpu-encoder row: one cell, the training
    time of a headless run two thirds of a vanilla one's, timestamps in step order."""
    return {
        **row(model, metric, value, seed=seed, step=step, task=task),
        "suite": "paper-cpu-encoder",
        "cell_id": "c",
        "train_seconds": step * (0.1 if model.endswith("cwt") else 0.15),
        "timestamp": T0 + timedelta(seconds=step),
    }


def encoder_rows(
    tmp: Path,
    sst2_ce: float,
    gain: float,
    suite: str = "paper-cpu-encoder",
    seeds: int = 3,
    arms: tuple[str, ...] = ("ce", "cwt"),
    **columns: str,
) -> Path:
    """`seeds` seeds of ce and cwt at steps 1000-3000: cwt better by `gain` (+0.0005 x seed)
    on the average (bert-tiny, or bert-small in a paper-gpu suite): a spread small enough
    for 3 seeds to clear a claim's level corrected over a scale's declared family."""
    preset = "bert-small" if "gpu" in suite else "bert-tiny"
    rows = []
    for seed in range(seeds):
        noise = 0.0005 * seed
        for step in (1000, 2000, 3000):
            for model, g in ((f"{preset}-ce", 0.0), (f"{preset}-cwt", gain + noise)):
                if model.rsplit("-", 1)[1] not in arms:
                    continue
                rows += [
                    paper_row(model, "glue/sst2", "accuracy", sst2_ce + g + noise, seed, step),
                    paper_row(model, "glue/sst2", "majority", 0.51, seed, step),
                    paper_row(model, "glue/stsb", "spearman", 0.3 + g, seed, step),
                    paper_row(model, "glue/stsb", "pearson", 0.3 + g, seed, step),
                    paper_row(model, "glue/stsb", "majority", 0.0, seed, step),
                    paper_row(
                        model, "glue/average", "average", 0.5 + g + noise + step / 1e5, seed, step
                    ),
                ]
    write_cell(tmp / suite, "rows", [{**r, **columns} for r in rows])
    # the side-by-side speed ratio the equal-time comparison reads (paper-cpu-ablation)
    speed = [
        {
            **paper_row(f"{preset}-cwt", "throughput", "speedup_vs_baseline", 1.5, seed),
            "step": None,
            **columns,
        }
        for seed in range(3)
    ]
    ablation = "paper-cpu-ablation" if "cpu" in suite else suite  # a GPU suite measures its own
    write_cell(tmp / ablation, "speed", speed)
    return tmp


def decoder_rows(root: Path, unigram: float, acc: float = 0.0, headless: float = 4e6) -> Path:
    """A paper-cpu-decoder board under `root` whose vanilla model passes its validation gate
    and scores LAMBADA accuracy `acc` (0: no target exactly, which no perplexity makes
    comparable); its LAMBADA perplexity (2e6, the headless one's `headless`) set against the
    unigram model's `unigram` on the same targets."""
    rows = []
    for seed in range(3):
        for model, ppl in (("pythia-tiny-ce", 2e6), ("pythia-tiny-cwt", headless + 1e5 * seed)):
            rows += [
                paper_row(model, "validation", "val_ppl", 300.0, seed),
                paper_row(model, "validation", "unigram_ppl", 1000.0, seed),
                paper_row(model, "lm_eval/hlm_lambada", "acc", acc, seed),
                paper_row(model, "lm_eval/hlm_lambada", "perplexity", ppl, seed),
                paper_row(model, "lm_eval/hlm_lambada", "unigram_ppl", unigram, seed),
            ]
    write_cell(root / "paper-cpu-decoder", "rows", rows)
    return root


def duplicates_rows(root: Path, sst2: float) -> Path:
    """A paper-cpu-ablation board under `root` for CWT's duplicate targets, masked against
    kept (bert-tiny-cwt, the baseline of that measurement), over three seeds: SST-2
    accuracy `sst2` (plus the masked arm's gain) against a majority of 0.51."""
    rows = []
    for seed in range(3):
        for model, g in (("bert-tiny-cwt", 0.0), ("bert-tiny-cwt-mask", 0.01 + 0.002 * seed)):
            rows += [
                paper_row(model, "glue/sst2", "accuracy", sst2 + g, seed),
                paper_row(model, "glue/sst2", "majority", 0.51, seed),
                paper_row(model, "glue/stsb", "pearson", 0.3, seed),
                paper_row(model, "glue/stsb", "majority", 0.0, seed),
                paper_row(model, "glue/average", "average", 0.5 + g, seed),
            ]
    write_cell(root / "paper-cpu-ablation", "rows", rows)
    return root


def by_key(found, key: str):
    return next(f for f in found if f.figure.key.startswith(key))
