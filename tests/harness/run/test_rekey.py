"""Re-keying rows written under an older cell-id scheme: pairs proved equal, files renamed and
ids rewritten with every value kept, a different pretraining refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.results.leaderboard import read_leaderboard, write_cell
from harness.results.samples import read_samples, write_samples
from harness.run.cells import Cell, expand
from harness.run.rekey import JOINED, OldCell, apply, pair, read_old_cells
from harness.suite import load_suite
from tests.harness.conftest import TINY
from tests.harness.results.test_leaderboard import row
from zoo.errors import UserError

# what the old pretraining key read that the current code holds to be runtime
OLD_RUNTIME = {"save_every": 3, "save_steps": [], "save_at": {}, "device": "auto"}


def _cells() -> list[Cell]:
    return expand(load_suite(TINY))


def _old(c: Cell, i: int, **changed: object) -> OldCell:
    assert c.pretrain is not None
    keyed = {**c.pretrain.key_fields(), **OLD_RUNTIME, **changed}
    return OldCell(f"{i:016x}", {**c.config, "pretrain_key": f"old-key-{i}"}, keyed)


def test_pair_matches_every_cell_whose_pretraining_is_the_same() -> None:
    cells = _cells()
    old = [_old(c, i) for i, c in enumerate(cells)]
    moves, unpaired = pair(old, cells)
    assert not unpaired
    assert [(m.old, m.new, m.old_key, m.new_key) for m in moves] == [
        (f"{i:016x}", c.cell_id, f"old-key-{i}", c.pretrain_key) for i, c in enumerate(cells)
    ]


def test_pair_refuses_a_pretraining_that_differs_on_a_field_the_key_reads() -> None:
    c = _cells()[0]
    with pytest.raises(UserError, match=r"pretraining differs .*\(lr: 0\.5 -> "):
        pair([_old(c, 0, lr=0.5)], [c])
    # a field the current config no longer has is not taken for runtime
    with pytest.raises(UserError, match=r"old_knob: 1 -> \(absent\)"):
        pair([_old(c, 0, old_knob=1)], [c])
    # a keyed field the old scheme lacked
    keyed = _old(c, 0).keyed
    assert keyed is not None
    with pytest.raises(UserError, match=r"mlm_probability: \(absent\) -> 0\.15"):
        pair(
            [
                OldCell(
                    "a",
                    _old(c, 0).config,
                    {k: v for k, v in keyed.items() if k != "mlm_probability"},
                )
            ],
            [c],
        )
    # one pretrains, the other is a checkpoint
    with pytest.raises(UserError, match="one pretrains"):
        pair([OldCell("a", _old(c, 0).config, None)], [c])


def test_an_old_cell_whose_configuration_changed_is_left_unpaired() -> None:
    c = _cells()[0]
    o = _old(c, 0)
    other = OldCell(o.cell_id, {**o.config, "seed": 7}, o.keyed)
    assert pair([other], [c]) == ([], [other])


def _bf16_cells(ce_loss: dict[str, object] | None = None) -> list[Cell]:
    """The tiny suite's cells with a bf16 recipe (and `ce_loss` as its ce model's options)."""
    suite = load_suite(TINY)
    models = list(suite.models)
    if ce_loss is not None:
        assert models[0].objective == "ce"
        own = models[0].recipe.model_copy(update={"loss": ce_loss})
        models[0] = models[0].model_copy(update={"recipe": own})
    merged = suite.recipe.model_copy(update={"bf16": True})
    return expand(suite.model_copy(update={"recipe": merged, "models": models}))


def _keyed_before_score_dtype(c: Cell, i: int) -> OldCell:
    """The cell as the code before `loss.score_dtype` keyed it: the option absent."""
    o = _old(c, i)
    assert o.keyed is not None
    loss = {k: v for k, v in o.keyed["loss"].items() if k != "score_dtype"}
    return OldCell(o.cell_id, o.config, {**o.keyed, "loss": loss})


def test_score_dtype_moves_the_plain_vocabulary_loss_and_files_the_contrastive_away() -> None:
    """Under bf16, the old code multiplied the head's logits in bf16, as `autocast` does now,
    and the contrastive scores in fp32, which `autocast` no longer does."""
    cells = _bf16_cells()
    old = [_keyed_before_score_dtype(c, i) for i, c in enumerate(cells)]
    with pytest.raises(UserError, match=r"loss: .* -> .*'score_dtype': 'autocast'"):
        pair(old, cells)  # strict: a setting the old key lacked
    moves, unpaired = pair(old, cells, JOINED["score_dtype"])
    objective = {c.cell_id: c.pretrain.objective for c in cells if c.pretrain is not None}
    assert {objective[m.new] for m in moves} == {"ce"}
    assert {o.config["model"] for o in unpaired} == {"bert-tiny-cwt"}
    assert len(moves) + len(unpaired) == len(cells)
    # the chunked vocabulary loss multiplied in fp32 then: computed differently now
    chunked = _bf16_cells(ce_loss={"ce_impl": "chunked"})
    old = [_keyed_before_score_dtype(c, i) for i, c in enumerate(chunked)]
    assert pair(old, chunked, JOINED["score_dtype"])[0] == []
    # a difference beyond the setting is still an error
    c = _bf16_cells()[0]
    o = _keyed_before_score_dtype(c, 0)
    assert o.keyed is not None
    with pytest.raises(UserError, match=r"lr: 0\.5 ->"):
        pair([OldCell(o.cell_id, o.config, {**o.keyed, "lr": 0.5})], [c], JOINED["score_dtype"])


def _write_old(folder: Path, o: OldCell) -> None:
    """The cell's rows (of its own task: two cells never write one row key) at steps 6 and 3."""
    task = o.config["task"]["name"] or o.config["task"]["type"]
    for rid, step in ((o.cell_id, 6), (f"{o.cell_id}.step-0000003", 3)):
        r = row("bert-tiny-ce", "val_loss", 5.0 + step, step=step, task=task)
        r.update(cell_id=o.cell_id, config=json.dumps(o.config, sort_keys=True))
        write_cell(folder, rid, [r])
    sample = {"cell_id": o.cell_id, "model": "bert-tiny-ce", "sweep": "{}", "seed": 0}
    sample.update(step=6, task=task, metric="val_loss", key="0", value=1.5)
    write_samples(folder, o.cell_id, [sample])
    (folder / "_artifacts" / o.cell_id).mkdir(parents=True)
    (folder / "_artifacts" / o.cell_id / "results.json").write_text("{}")


def test_apply_renames_the_files_and_rewrites_only_the_ids(tmp_path: Path) -> None:
    cells = _cells()
    old = [_old(c, i) for i, c in enumerate(cells[:2])]
    for o in old:
        _write_old(tmp_path, o)
    before = read_leaderboard(tmp_path)
    moves, _ = pair(old, cells)
    assert apply(tmp_path, moves) == 2 * 4  # two result files, samples, artifacts each
    after = read_leaderboard(tmp_path).sort_values(["cell_id", "step"])
    before["cell_id"] = before["cell_id"].map({m.old: m.new for m in moves})
    before = before.sort_values(["cell_id", "step"])
    assert list(after["cell_id"]) == list(before["cell_id"])
    key_of = {c.cell_id: c.pretrain_key for c in cells}
    assert [json.loads(c)["pretrain_key"] for c in after["config"]] == [
        key_of[c] for c in after["cell_id"]
    ]
    kept = [c for c in after.columns if c not in ("cell_id", "config")]
    assert after[kept].reset_index(drop=True).equals(before[kept].reset_index(drop=True))
    assert set(read_samples(tmp_path)["cell_id"]) == {c.cell_id for c in cells[:2]}
    assert sorted(p.name for p in (tmp_path / "_artifacts").iterdir()) == sorted(
        c.cell_id for c in cells[:2]
    )
    assert {p.name for p in tmp_path.glob("*.parquet")} == {
        f"{c.cell_id}{s}.parquet" for c in cells[:2] for s in ("", ".step-0000003")
    }
    assert apply(tmp_path, moves) == 0  # run again: nothing left to move


def test_read_old_cells_names_the_bad_line(tmp_path: Path) -> None:
    f = tmp_path / "cells.jsonl"
    f.write_text('{"cell_id": "a", "config": {}, "keyed": null}\n{"cell_id": "b"}\n')
    with pytest.raises(UserError, match=r"cells\.jsonl:2: not an exported cell"):
        read_old_cells(f)
    f.write_text('{"cell_id": "a", "config": {"seed": 1}, "keyed": null}\n')
    assert read_old_cells(f) == [OldCell("a", {"seed": 1}, None)]


ROOT = Path(__file__).parents[3]
BOARDS = ROOT / "leaderboards"
# a suite's own board, or one under a second machine's folder (`amd-epyc/<suite>`)
COMMITTED = sorted(str(p.parent.relative_to(BOARDS)) for p in BOARDS.glob("**/_cells.json"))


@pytest.mark.parametrize("board", COMMITTED)
def test_every_committed_leaderboard_is_keyed_as_the_code_keys_its_suite(board: str) -> None:
    """`hlm run` resumes the committed rows only while the code gives the suite's cells the
    ids they were filed under: a change to what a cell id or a pretraining key hashes must
    re-key them (as tools/rekey_leaderboards.py did), or it orphans the report's rows."""
    recorded = json.loads((BOARDS / board / "_cells.json").read_text())
    name = Path(board).name
    ids = {c.cell_id for c in expand(load_suite(ROOT / "suites" / f"{name}.yaml"))}
    assert ids == set(recorded), (
        f"leaderboards/{board}/_cells.json: {len(ids - set(recorded))} cells of "
        f"suites/{name}.yaml not recorded, {len(set(recorded) - ids)} recorded cells not in it: "
        f"an edited suite is run (`hlm run {name}` records its cells first); a change to what "
        "the keys hash re-keys the committed rows (harness.run.rekey)"
    )
