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
# Every other package comes from requirements.lock (exact versions, sha256 hashes, Linux
# x86-64, Python 3.11): `make lock` resolves it anew from pyproject.toml and constraints.txt,
# reading torch's dependencies from the CPU wheel TORCH_SOURCE points at, e.g.
#   make lock TORCH_SOURCE="--find-links /opt/wheels"
TORCH_SOURCE ?= --extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match

.PHONY: env lock demo test lint typecheck pytest fuzz bench clean

$(BIN)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/pip install --quiet --no-deps torch==2.13.0 $(TORCH_INDEX)
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	touch $@

env: $(BIN)/.installed

# the lock's one command; then `make test` on the new versions before committing it
lock: env
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra slurm --generate-hashes --no-annotate \
		--python-version 3.11 --python-platform x86_64-manylinux_2_28 --no-emit-package torch \
		-c constraints.txt $(TORCH_SOURCE) --custom-compile-command "make lock" \
		-o requirements.lock

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
