# The README's two commands. Each does its own set-up on a fresh machine:
# a virtualenv in .venv with exactly the packages of the lock (requirements/dev.txt: every extra
# and the test tools, with hashes) and this package installed editable.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCK   := requirements/dev.txt
# Held while the venv is (re)installed (beside it, not in it: the venv may not exist yet).
INSTALL_LOCK := .venv.install.lock
# make lock's resolution: one lock for every platform, for the Python CI runs.
UV_COMPILE = pip compile pyproject.toml requirements/build.in --extra dev --generate-hashes --universal \
	--python-version 3.11 --custom-compile-command "make lock" --quiet
CHROMIUM := /usr/bin/chromium
# JupyterLab refuses to run as root unless told (containers and CI machines often are root).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab app test test-fast test-latest test-lowest test-floors lint docs install lock clean

# Re-install only when the lock (or the package's metadata) changes, so the second run is quick.
# pip checks every file against the lock's hashes; the package itself goes in without its
# dependencies (they are the lock's) and is built by the lock's setuptools.
# Two `make install` at once would run pip into one .venv together: the recipe holds a lock
# (flock, util-linux) and, once it has it, looks again whether the other one already did the work.
$(STAMP): $(LOCK) pyproject.toml
	flock -w 3600 $(INSTALL_LOCK) sh -ec ' \
	  if [ -f $(STAMP) ] && [ $(STAMP) -nt $(LOCK) ] && [ $(STAMP) -nt pyproject.toml ]; then exit 0; fi; \
	  test -x $(BIN)/python || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK); \
	  $(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .; \
	  touch $(STAMP)'

install: $(STAMP)

## make lock: re-resolve requirements/dev.txt after a change to pyproject.toml's dependencies,
## keeping every pin that still fits; `make lock UPGRADE=1` moves every pin to the newest release.
lock: $(STAMP)
	$(BIN)/uv $(UV_COMPILE) $(if $(UPGRADE),--upgrade) -o $(LOCK)

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

## make test: the docs site, lint and the floors check, then every test: unit, property, CLI, real Crafter,
## the real task-app server, the widgets in JupyterLab in chromium, and the notebooks under nbval.
test: docs lint test-floors $(CHROMIUM)
	$(BIN)/python -m pytest tests notebooks --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg

## make test-latest: what `pip install` gives a user today: a fresh venv (.venv-latest) with the
## newest releases the ranges allow, the lint gate and every test tier (`make test`'s run).
test-latest: $(STAMP) $(CHROMIUM)
	$(BIN)/python scripts/test_ranges.py latest

## make test-floors: every floor pyproject.toml states is one a resolution installs (uv resolves the core and
## each extra at their floors; no venv, no tests: seconds once uv's cache is warm). make test-lowest runs it too.
test-floors: $(STAMP)
	$(BIN)/python scripts/test_ranges.py floors

## make test-lowest: the lowest versions the ranges allow (each direct dependency at its floor,
## the core's and every extra's), in a fresh venv (.venv-lowest), with `make test-fast`'s tier.
test-lowest: $(STAMP)
	$(BIN)/python scripts/test_ranges.py lowest

clean:
	rm -rf $(VENV) $(INSTALL_LOCK) .venv-latest .venv-lowest .pytest_cache build site *.egg-info
