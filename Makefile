# zinc: the two setup commands are `make run` and `make test`.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.zinc-installed
TEST_STAMP := $(VENV)/.zinc-test-installed

.PHONY: run test install clean

$(VPY):
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

$(STAMP): $(VPY) pyproject.toml
	$(VPY) -m pip install -q -e .
	touch $(STAMP)

$(TEST_STAMP): $(VPY) pyproject.toml
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(VPY) -m pip install -q -e '.[test]'
	touch $(STAMP) $(TEST_STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/zinc chat

test: $(TEST_STAMP)
	$(VPY) -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
