"""BLiMP's data under the local data root (`blimp/`): its 67 paradigms of 1,000 minimal pairs
(Warstadt et al., TACL 2020, CC BY 4.0) and the paper's reference accuracies per paradigm
(`models_summary.jsonl`: a 5-gram model, an LSTM, Transformer-XL and GPT-2).

    pairs = load_pairs(data_root(), list(PARADIGMS), max_pairs=100)   # the same 100 for all
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zoo.errors import UserError
from zoo.reader import read_text

FOLDER = "blimp"
REFERENCES = {"ref_5gram": "ngram", "ref_lstm": "lstm", "ref_txl": "txl", "ref_gpt2": "gpt2"}
# the paradigms' file names, as BLiMP's repository names them
PARADIGMS = (
    "adjunct_island",
    "anaphor_gender_agreement",
    "anaphor_number_agreement",
    "animate_subject_passive",
    "animate_subject_trans",
    "causative",
    "complex_NP_island",
    "coordinate_structure_constraint_complex_left_branch",
    "coordinate_structure_constraint_object_extraction",
    "determiner_noun_agreement_1",
    "determiner_noun_agreement_2",
    "determiner_noun_agreement_irregular_1",
    "determiner_noun_agreement_irregular_2",
    "determiner_noun_agreement_with_adj_2",
    "determiner_noun_agreement_with_adj_irregular_1",
    "determiner_noun_agreement_with_adj_irregular_2",
    "determiner_noun_agreement_with_adjective_1",
    "distractor_agreement_relational_noun",
    "distractor_agreement_relative_clause",
    "drop_argument",
    "ellipsis_n_bar_1",
    "ellipsis_n_bar_2",
    "existential_there_object_raising",
    "existential_there_quantifiers_1",
    "existential_there_quantifiers_2",
    "existential_there_subject_raising",
    "expletive_it_object_raising",
    "inchoative",
    "intransitive",
    "irregular_past_participle_adjectives",
    "irregular_past_participle_verbs",
    "irregular_plural_subject_verb_agreement_1",
    "irregular_plural_subject_verb_agreement_2",
    "left_branch_island_echo_question",
    "left_branch_island_simple_question",
    "matrix_question_npi_licensor_present",
    "npi_present_1",
    "npi_present_2",
    "only_npi_licensor_present",
    "only_npi_scope",
    "passive_1",
    "passive_2",
    "principle_A_c_command",
    "principle_A_case_1",
    "principle_A_case_2",
    "principle_A_domain_1",
    "principle_A_domain_2",
    "principle_A_domain_3",
    "principle_A_reconstruction",
    "regular_plural_subject_verb_agreement_1",
    "regular_plural_subject_verb_agreement_2",
    "sentential_negation_npi_licensor_present",
    "sentential_negation_npi_scope",
    "sentential_subject_island",
    "superlative_quantifiers_1",
    "superlative_quantifiers_2",
    "tough_vs_raising_1",
    "tough_vs_raising_2",
    "transitive",
    "wh_island",
    "wh_questions_object_gap",
    "wh_questions_subject_gap",
    "wh_questions_subject_gap_long_distance",
    "wh_vs_that_no_gap",
    "wh_vs_that_no_gap_long_distance",
    "wh_vs_that_with_gap",
    "wh_vs_that_with_gap_long_distance",
)


@dataclass(frozen=True)
class Pair:
    paradigm: str
    field: str
    pair_id: str
    good: str
    bad: str


def load_pairs(root: Path, names: list[str], max_pairs: int | None) -> list[Pair]:
    """The pairs of `names`; with `max_pairs`, the same seeded subsample for every model."""
    pairs = []
    for name in names:
        path = root / FOLDER / f"{name}.jsonl"
        lines = [ln for ln in read_text(path, "a BLiMP paradigm").split("\n") if ln.strip()]
        rows = [json.loads(ln) for ln in lines]
        if max_pairs is not None and len(rows) > max_pairs:
            keep = np.random.default_rng(0).permutation(len(rows))[:max_pairs]
            rows = [rows[i] for i in sorted(keep)]
        try:
            pairs += [
                Pair(name, r["field"].replace("/", "_"), str(r["pairID"]), r["sentence_good"],
                     r["sentence_bad"])
                for r in rows
            ]  # fmt: skip
        except (KeyError, TypeError, AttributeError) as exc:
            raise UserError(f"{path}: not a BLiMP paradigm file ({exc!r} missing)") from None
    return pairs


def references(root: Path) -> dict[str, dict[str, float]]:
    """{paradigm: {ref metric: accuracy}} of the BLiMP paper's models."""
    path = root / FOLDER / "models_summary.jsonl"
    out = {}
    for line in read_text(path, "BLiMP's reference accuracies").split("\n"):
        if line.strip():
            row = json.loads(line)
            out[row["UID"]] = {m: float(row[k]) for m, k in REFERENCES.items()}
    return out


def data_files(names: list[str]) -> list[str]:
    """The files under the data root that scoring `names` reads."""
    return [f"{FOLDER}/{n}.jsonl" for n in names] + [f"{FOLDER}/models_summary.jsonl"]
