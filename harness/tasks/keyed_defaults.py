"""The defaults each built-in task type's params had when cells were first keyed by them.

A cell's id hashes its task params as the suite wrote them (`harness.run.cells`), not the
defaults filled in for the ones it leaves out. A default changed in code would then leave
the ids of the cells that rely on it as they were: their committed rows would count as done,
and stand beside new seeds' rows computed under the new default, one arm mixing two
protocols. So the defaults are pinned here, once, and never updated: `moved_defaults` gives,
for one task entry, each param it leaves unset whose default now differs from its pinned
one. Those join the cell's id (`task_defaults`), so exactly the cells that relied on the old
default are computed anew, and a default changed back finds its old rows again.

A benchmark's default sub-tasks (`TaskType.default_subtasks`, run where an entry names none)
are pinned the same way (`PINNED_SUBTASKS`): a changed set would move what the entry's
`average` row averages.

The shipped lm-eval task files are pinned by their contents (`PINNED_SHIPPED`): a cell names
its task, not the YAML and loader that define it, so an edited shipped task would otherwise
keep the ids of the cells that ran the old one.

The local data a cell reads (`TaskType.identity`: GLUE's TSVs, WordNet, LAMBADA...) is
pinned by its contents as read (`PINNED_DATA`): a suite names its data files by path, so an
edited file would otherwise keep the ids of the cells that read the old one. Only what
differs from its pin joins the id (`moved_data`), so the shipped data's cells keep theirs.

A new param is pinned at its first default, the behaviour before it existed
(`tests/harness/tasks/test_keyed_defaults.py` checks every param of every built-in task type
is pinned). A plugin's task types are not pinned: a plugin file's contents key every cell of
the suite that loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.tasks.base import TASKS

_FINETUNE: dict[str, Any] = {
    "tasks": [],
    "source": "hub",
    "revision": None,
    "data_dir": None,
    "train_files": {},
    "eval_files": {},
    "max_examples": None,
    "max_eval_examples": None,
    "epochs": 10,
    "batch_size": 32,
    "lr": None,
    "weight_decay": None,
    "loss": "balanced",
    "warmup_ratio": 0.1,
    "max_length": 128,
    "finetune_seeds": 1,
    "device": "auto",
    "pooling": "cls-pooler",
    "schedule": "constant",
    "lr_grid": None,
}
# task type -> param -> its default as JSON, as pinned; a param with no default is absent
PINNED: dict[str, dict[str, Any]] = {
    "glue": _FINETUNE,
    "superglue": _FINETUNE,
    "synthetic": _FINETUNE,
    "xnli": {
        **_FINETUNE,
        "epochs": 3,
        "batch_size": 128,
        "lr": 2e-05,
        "weight_decay": 0.0,
        "loss": "ce",
        "mode": "translate-train",
        "languages": ["ar", "de", "en", "es", "fr", "hi", "zh"],
    },
    "lm_eval": {
        "include_path": [],
        "num_fewshot": 0,
        "limit": None,
        "batch_size": 8,
        "output_path": None,
        "data_dir": None,
        "device": "auto",
        "dtype": "auto",
        "log_samples": False,
        "progress": False,
        "seeds": None,
        "gen_kwargs": None,
        "apply_chat_template": False,
        "fewshot_as_multiturn": None,
        "system_instruction": None,
        "predict_only": False,
        "metadata": None,
        "revision": None,
        "max_length": None,
        "use_cache": None,
        "write_out": False,
    },
    "synonyms": {"wordnet": None, "pos": ["noun", "verb", "adj", "adv"]},
    "probe": {
        "tasks": ["sst2", "mrpc", "stsb"],
        "features": ["mean", "static"],
        "max_examples": None,
        "max_length": 128,
        "batch_size": 64,
        "heldout": 0,
    },
    "blimp": {"paradigms": [], "max_pairs": None, "scorer": "auto", "batch_tokens": 8192},
    "throughput": {
        "steps": 5,
        "warmup": 2,
        "baseline": "ce",
        "hf_baseline": True,
        "memory": True,
        "mfu": True,
        "max_batch": False,
        "device": "auto",
        "batch_size": None,
        "seq_len": None,
    },
    "validation": {"corpus": None, "batches": 8, "batch_size": None},
}


# task type -> the sub-tasks it runs when an entry names none (`tasks: []`), as pinned: a
# changed default set moves the meaning of the entry's `average` row
PINNED_SUBTASKS: dict[str, list[str]] = {
    "glue": ["cola", "sst2", "mrpc", "stsb", "qnli", "qqp", "mnli"],
    "superglue": ["boolq", "cb", "copa", "wic"],
    "synthetic": ["agreement"],
}


# each file of the shipped lm-eval task folder (`harness/lm_eval_tasks/`) -> the first 16 hex
# digits of its sha256 as first keyed: an edited shipped task re-keys the cells that run it
# (`harness.tasks.lm_eval_folders.shipped_moved`), as an edited task folder of a suite does
PINNED_SHIPPED: dict[str, str] = {
    "hlm_blimp.yaml": "b8469eb1508dd52e",
    "hlm_blimp_utils.py": "23f8260e3d607186",
    "hlm_boolq.yaml": "f86dd38003440b9d",
    "hlm_crows_pairs_english.yaml": "f0c1bfbe3b4b7b30",
    "hlm_lambada.yaml": "cad73360190b8d0f",
    "hlm_pubmedqa.yaml": "01e4792fff0bfb06",
    "hlm_utils.py": "5c5921281589daf8",
}


# each local data file a built-in task type reads, by its name under the data root -> the
# first 16 hex digits of the sha256 of its contents as read (`TaskType.identity`: the
# file's bytes; WordNet's: the synsets the synonyms task reads, which a trimmed copy keeps), as
# first keyed: an edited file re-keys the cells that read it
PINNED_DATA: dict[str, str] = {
    "blimp/adjunct_island.jsonl": "ecc71c452516de03",
    "blimp/anaphor_gender_agreement.jsonl": "fd7d6e47196fa131",
    "blimp/anaphor_number_agreement.jsonl": "05c16b8bfe4feb5b",
    "blimp/animate_subject_passive.jsonl": "245e91961cf59715",
    "blimp/animate_subject_trans.jsonl": "a7bffeda200f648c",
    "blimp/causative.jsonl": "2e1006cc24094a30",
    "blimp/complex_NP_island.jsonl": "1c92472731dd9a21",
    "blimp/coordinate_structure_constraint_complex_left_branch.jsonl": "47e0e04efeb32044",
    "blimp/coordinate_structure_constraint_object_extraction.jsonl": "d01c27a7a893f3ec",
    "blimp/determiner_noun_agreement_1.jsonl": "f48065fd760d0fd1",
    "blimp/determiner_noun_agreement_2.jsonl": "8ae7eff7c7bd384f",
    "blimp/determiner_noun_agreement_irregular_1.jsonl": "4f350e88db9e29e5",
    "blimp/determiner_noun_agreement_irregular_2.jsonl": "d688af0ccd0614d2",
    "blimp/determiner_noun_agreement_with_adj_2.jsonl": "8d2828d7dfbfc3f7",
    "blimp/determiner_noun_agreement_with_adj_irregular_1.jsonl": "1f4c6e42a48f4220",
    "blimp/determiner_noun_agreement_with_adj_irregular_2.jsonl": "aa3f297a7ce0c03b",
    "blimp/determiner_noun_agreement_with_adjective_1.jsonl": "2c3de4e7b7aea499",
    "blimp/distractor_agreement_relational_noun.jsonl": "37c1553f4c6594b1",
    "blimp/distractor_agreement_relative_clause.jsonl": "854728b6db8f23f1",
    "blimp/drop_argument.jsonl": "e262339a262a57a8",
    "blimp/ellipsis_n_bar_1.jsonl": "3cc0bcf91631a447",
    "blimp/ellipsis_n_bar_2.jsonl": "3dfc2b378ea48671",
    "blimp/existential_there_object_raising.jsonl": "3781bfd54ec1208f",
    "blimp/existential_there_quantifiers_1.jsonl": "4bd0f6dee3c1824b",
    "blimp/existential_there_quantifiers_2.jsonl": "b1a80f4ebebae90a",
    "blimp/existential_there_subject_raising.jsonl": "7c6f5b13225f73a7",
    "blimp/expletive_it_object_raising.jsonl": "15ed3a52c978ecfe",
    "blimp/inchoative.jsonl": "d9389a7130ca84c6",
    "blimp/intransitive.jsonl": "9af9f3f30c891cd2",
    "blimp/irregular_past_participle_adjectives.jsonl": "5e490be072398949",
    "blimp/irregular_past_participle_verbs.jsonl": "75a990117c1a403d",
    "blimp/irregular_plural_subject_verb_agreement_1.jsonl": "0066174143671bff",
    "blimp/irregular_plural_subject_verb_agreement_2.jsonl": "9b22db814e7b7251",
    "blimp/left_branch_island_echo_question.jsonl": "7dadbe3c5a5ceadb",
    "blimp/left_branch_island_simple_question.jsonl": "e2a64b8a1b7b8d94",
    "blimp/matrix_question_npi_licensor_present.jsonl": "657c9d6e6d50a9cd",
    "blimp/npi_present_1.jsonl": "9aa85dc5c2b0d85e",
    "blimp/npi_present_2.jsonl": "52fcfa230a40ae27",
    "blimp/only_npi_licensor_present.jsonl": "475c6595187a32e4",
    "blimp/only_npi_scope.jsonl": "ca1f0671643e3793",
    "blimp/passive_1.jsonl": "e9374307bca5c24e",
    "blimp/passive_2.jsonl": "4d49e438185bed41",
    "blimp/principle_A_c_command.jsonl": "74c8111666542c79",
    "blimp/principle_A_case_1.jsonl": "7efb5246fe315dc2",
    "blimp/principle_A_case_2.jsonl": "5de6db4c21a8433b",
    "blimp/principle_A_domain_1.jsonl": "2276dc35a51396c7",
    "blimp/principle_A_domain_2.jsonl": "9d14e5ae911fb8dd",
    "blimp/principle_A_domain_3.jsonl": "a0d66b9d8541ab1d",
    "blimp/principle_A_reconstruction.jsonl": "65dc403c4d6e9a60",
    "blimp/regular_plural_subject_verb_agreement_1.jsonl": "1a18d94062c8e792",
    "blimp/regular_plural_subject_verb_agreement_2.jsonl": "e5b4668811e63b00",
    "blimp/sentential_negation_npi_licensor_present.jsonl": "c43405aca13ba4aa",
    "blimp/sentential_negation_npi_scope.jsonl": "6c341ccc39c94bea",
    "blimp/sentential_subject_island.jsonl": "a286b67cc5912aaf",
    "blimp/superlative_quantifiers_1.jsonl": "bebc5c5ff28cf226",
    "blimp/superlative_quantifiers_2.jsonl": "4bef08f3e6bd3fbb",
    "blimp/tough_vs_raising_1.jsonl": "8eb3a1ecbdbd969c",
    "blimp/tough_vs_raising_2.jsonl": "a6db2f24a8aee0c9",
    "blimp/transitive.jsonl": "48de2025571897c7",
    "blimp/wh_island.jsonl": "77824ca8c0008fb7",
    "blimp/wh_questions_object_gap.jsonl": "685c74eb8c199f30",
    "blimp/wh_questions_subject_gap.jsonl": "3c33e4efc7182824",
    "blimp/wh_questions_subject_gap_long_distance.jsonl": "985bae202dbc5566",
    "blimp/wh_vs_that_no_gap.jsonl": "6a25d0d1499e9f52",
    "blimp/wh_vs_that_no_gap_long_distance.jsonl": "968faf59602a67f9",
    "blimp/wh_vs_that_with_gap.jsonl": "56f1ca988a8ca368",
    "blimp/wh_vs_that_with_gap_long_distance.jsonl": "3cb19100d6384264",
    "blimp/models_summary.jsonl": "d54b1b361559eec9",
    "crows_pairs/crows_pairs_anonymized.csv": "dfb36986ce0502ab",
    "glue/CoLA/dev.tsv": "8c013e21dc39957c",
    "glue/CoLA/train.tsv": "cb368ebeb9f27d7a",
    "glue/MRPC/dev.tsv": "9e8f284788040f7c",
    "glue/MRPC/train.tsv": "f178bcc72ab4c2c1",
    "glue/QNLI/dev.tsv": "ac19409dcb04631e",
    "glue/RTE/dev.tsv": "80230dfa1347282e",
    "glue/RTE/train.tsv": "41e3a9b063433392",
    "glue/SST-2/dev.tsv": "54a9c12c77e402fc",
    "glue/SST-2/train.tsv": "48eac26399f84569",
    "glue/STS-B/dev.tsv": "fe7dc0632a503356",
    "glue/STS-B/train.tsv": "41c4d978b6162abd",
    "lambada/lambada_test.jsonl": "4aa8d02cd17c7191",
    "pubmedqa/ori_pqal.json": "8b3276be8942ebbd",
    "pubmedqa/test_ground_truth.json": "939fe566f09017d1",
    "superglue/BoolQ/train_fewglue32.jsonl": "317245ba08421292",
    "superglue/BoolQ/val.jsonl": "21acbfbd1e7908fd",
    "superglue/CB/train_fewglue32.jsonl": "e6f446e5f117cbfb",
    "superglue/CB/val.jsonl": "c6125587e9601560",
    "superglue/COPA/train_fewglue32.jsonl": "9955ae6e0ee109c9",
    "superglue/COPA/val.jsonl": "fa61467cc2510101",
    "superglue/WiC/train_fewglue32.jsonl": "b82c0c3f79d2f19b",
    "superglue/WiC/val.jsonl": "7a954e2f2ffbe3df",
    "wordnet/data.adj": "febf31a723598872",
    "wordnet/data.adv": "5be7b225ae1d474a",
    "wordnet/data.noun": "5e3ffc375af6f009",
    "wordnet/data.verb": "bd213e53b67e5556",
    "xnli/dev-ar.tsv": "234237be8250fbdf",
    "xnli/dev-bg.tsv": "1137999816dc8c7f",
    "xnli/dev-de.tsv": "cc72840e5daa08a8",
    "xnli/dev-el.tsv": "ad9730e84ef2943d",
    "xnli/dev-en.tsv": "7e7ac6fe0b84ce13",
    "xnli/dev-es.tsv": "eadee2bff6f31f9b",
    "xnli/dev-fr.tsv": "58db1c233ec28335",
    "xnli/dev-hi.tsv": "911c4dc546d50642",
    "xnli/dev-ru.tsv": "fcc3ac697104165a",
    "xnli/dev-sw.tsv": "f81755c66d97564c",
    "xnli/dev-th.tsv": "8632d6380c0a440a",
    "xnli/dev-tr.tsv": "f94f63d8ef4fcf78",
    "xnli/dev-ur.tsv": "ebd30b594a2c5e33",
    "xnli/dev-vi.tsv": "8cb3648cacceb056",
    "xnli/dev-zh.tsv": "9a1e2df22ad00831",
}


def moved_data(digests: Mapping[str, str | None]) -> dict[str, str]:
    """The data of `digests` (a cell's, `TaskType.identity`) whose digest differs from
    its pin (`PINNED_DATA`), or that has none (a user's own files), with its digest. Data not
    there (None) adds nothing: `hlm run` refuses to start a cell that would read it."""
    return {
        name: digest
        for name, digest in sorted(digests.items())
        if digest is not None and (name not in PINNED_DATA or PINNED_DATA[name] != digest)
    }


def defaults_now(task_type: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Every param of `task_type` as `params` (a task entry's, as written) resolve, as JSON."""
    spec = TASKS.get(task_type)
    resolved: dict[str, Any] = spec.params.model_validate(dict(params)).model_dump(mode="json")
    return resolved


def moved_defaults(task_type: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The params `params` leave unset whose default now differs from the pinned one, with
    their default now, and `default_tasks` where they name no sub-tasks and the default set
    differs from the pinned one; {} for a task type not pinned here (a plugin's)."""
    if task_type not in PINNED:
        return {}
    pinned = PINNED[task_type]
    now = defaults_now(task_type, params)
    moved = {
        name: value
        for name, value in sorted(now.items())
        if name not in params and name in pinned and value != pinned[name]
    }
    subtasks = list(TASKS.get(task_type).default_subtasks)
    names_none = "tasks" not in params or params["tasks"] == []
    if names_none and task_type in PINNED_SUBTASKS and subtasks != PINNED_SUBTASKS[task_type]:
        moved["default_tasks"] = subtasks
    return moved
