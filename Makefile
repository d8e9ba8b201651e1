# headless-zoo: the two set-up commands of the README, and their parts.
#   make demo   create .venv, then run the quickstart suite (embedded synthetic corpus, no network)
#   make test   create .venv, then lint + format check + type check + the full test suite
#   make fuzz   every generated bad input (the fuzzer's full run; make test runs a subset)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# torch comes first, as the CPU pin: anything looser on a machine with no torch pulls a
# multi-GB CUDA build. Elsewhere than this workplace, point pip at the CPU index, e.g.
#   make test TORCH_INDEX="--index-url https://download.pytorch.org/whl/cpu"
TORCH_INDEX ?=

.PHONY: env demo test lint typecheck pytest fuzz bench clean

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet torch==2.13.0 $(TORCH_INDEX)
	$(BIN)/pip install --quiet -e '.[dev]' -c constraints.txt
	touch $@

env: $(BIN)/.installed

demo: env
	$(BIN)/hlm run suites/quickstart.yaml
	$(BIN)/hlm leaderboard quickstart --sort validation/val_ppl
	$(BIN)/hlm plot quickstart

lint: env
	$(BIN)/ruff check zoo harness benchmarks tests examples suites
	$(BIN)/ruff format --check zoo harness benchmarks tests examples suites

typecheck: env
	$(BIN)/mypy

pytest: env
	$(BIN)/pytest -q -n auto --dist worksteal

# lint and the type check run beside the tests, not before them: on a clean clone the type
# check's minute overlaps pytest's workers; any part failing fails `make test`
test: env
	$(MAKE) --no-print-directory -j3 lint typecheck pytest

# the trust boundary's other classes, one generator each: what a publish copies, names from
# data, trust by content, bounded claims and task options, damaged states and full disks
FUZZ_CLASSES = tests/harness/publish/test_manifest.py tests/zoo/test_text.py \
	tests/zoo/test_shipped.py tests/harness/suite/test_suite_loading.py \
	tests/zoo/train/test_sharded.py tests/reliability/test_resume.py \
	tests/harness/paper/test_claims_file.py

# every generated bad input (configs, flags, suites, damaged files, folder states, and the four
# rules' generators: names, placed links and devices, hostile JSON, every verb's flags, and
# FIFOs, devices and sparse files where the verbs read);
# `make test` runs a quarter of the file cases and 25 drawn cases a fuzz test
fuzz: env
	HLM_FUZZ=full $(BIN)/pytest -q -p no:cacheprovider --hypothesis-show-statistics \
		tests/reliability/test_bad_input.py tests/reliability/test_fuzz_files.py \
		tests/reliability/test_crafted_files.py tests/reliability/test_fuzz_rules.py \
		tests/reliability/test_fuzz_readers.py $(FUZZ_CLASSES)

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache
	git clean -fdXq leaderboards  # what runs wrote, not the committed paper-* results
