# The README's two commands. Each does its own set-up on a fresh machine:
# a virtualenv in .venv with this package installed editable, with its extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CHROMIUM := /usr/bin/chromium
# JupyterLab refuses to run as root unless told (containers and CI machines often are root).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab app test test-fast lint docs install clean

# Re-install only when the dependency list changes, so the second run is quick.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The browser test drives Debian's chromium (Playwright must not download a browser of its own).
$(CHROMIUM):
	@command -v apt-get >/dev/null || { echo "tests/test_browser.py needs chromium at $(CHROMIUM): install it with your package manager"; exit 1; }
	apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium

## make lab: JupyterLab on notebooks/, bound to 127.0.0.1.
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 --no-browser $(ALLOW_ROOT)

## make app: the dashboard on the sample corpus, on 127.0.0.1 with a token (it prints the URL).
app: $(STAMP)
	$(BIN)/workbench app sample --config configs/upstream_shaped.yaml --config configs/recommended.yaml

## make lint: the layers contract (import-linter), ruff (lint and format) and mypy.
lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check workbench tests benchmarks scripts
	$(BIN)/ruff format --check workbench tests benchmarks scripts
	$(BIN)/mypy

## make docs: the documentation site (docs/, mkdocs.yml) built strictly into site/ (gitignored):
## a broken link, a missing page or a docstring mkdocstrings cannot read fails it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

## make test-fast: the unit tier, for the quick loop (no real Crafter runs, browser, task app
## server or notebooks).
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests -m "not crafter and not slow and not browser and not taskapp" -q

## make test: the docs site and lint, then every test: unit, property, CLI, real Crafter, the real task-app
## server, the widgets in JupyterLab in chromium, and the notebooks under nbval.
test: docs lint $(CHROMIUM)
	$(BIN)/python -m pytest tests notebooks --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg

clean:
	rm -rf $(VENV) .pytest_cache build site *.egg-info
