# The README's two commands. Each does its own set-up on a fresh machine:
# a virtualenv in .venv with this package installed editable, with its extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lab test install clean

# Re-install only when the dependency list changes, so the second run is quick.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## make lab: JupyterLab on notebooks/, bound to 127.0.0.1.
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 --no-browser

## make test: every test: unit, property, CLI, real Crafter, and the notebooks under nbval.
test: $(STAMP)
	$(BIN)/python -m pytest tests notebooks --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
