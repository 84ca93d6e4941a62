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

# llama.cpp (the test oracle) is built for portable AVX2: a native build may emit AMX/AVX-512
# instructions that some virtual machines advertise but do not allow (SIGILL at run time).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

$(TEST_STAMP): $(VPY) pyproject.toml
	$(VPY) -c "import llama_cpp" 2>/dev/null || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(VPY) -m pip install -q --no-cache-dir llama-cpp-python==0.3.36
	$(VPY) -m pip install -q -e '.[test]'
	touch $(STAMP) $(TEST_STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/zinc chat

# the tests spread over the machine's cores (pytest-xdist); TEST_JOBS=0 runs them in this process
TEST_JOBS ?= auto
test: $(TEST_STAMP)
	$(VPY) -m pytest -n $(TEST_JOBS) --dist worksteal $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
