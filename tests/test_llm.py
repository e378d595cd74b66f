"""scroll.llm: the protocol, config presets/validation, scripted backend, light imports."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scroll.llm import (
    LLM, Completion, LLMConfig, LLMError, ScriptedLLM, approx_count, complete_many, make_llm,
)

ROOT = Path(__file__).resolve().parents[1]
MSG = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]


# --- scripted -------------------------------------------------------------------------------

def test_scripted_replies_in_order_then_raises():
    llm = ScriptedLLM(["one", "two"])
    assert isinstance(llm, LLM)
    a, b = llm.complete(MSG), llm.complete(MSG, max_tokens=5, stop=["x"])
    assert (a.text, b.text) == ("one", "two")
    assert a.backend == b.backend == "scripted" and a.model == "scripted"
    assert a.prompt_tokens == approx_count(MSG) and a.completion_tokens >= 1
    assert a.finish_reason == "stop" and a.latency_s >= 0
    assert llm.calls[1]["max_tokens"] == 5 and llm.calls[1]["stop"] == ["x"]
    assert llm.calls[0]["messages"] == MSG
    with pytest.raises(LLMError, match="ran out of responses after 2"):
        llm.complete(MSG)
    assert llm.remaining == 0 and len(llm.calls) == 2
    assert llm.describe()["backend"] == "scripted"
    assert llm.token_counter_exact is False
    llm.close()


def test_scripted_callable_and_bad_reply():
    llm = ScriptedLLM(lambda msgs: "echo: " + msgs[-1]["content"])
    assert llm.complete(MSG).text == "echo: hello there"
    assert llm.describe()["responses"] == "callable"
    with pytest.raises(LLMError, match="not str"):
        ScriptedLLM(lambda msgs: 42).complete(MSG)
    with pytest.raises(ValueError, match="must be strings"):
        ScriptedLLM(["ok", 3])


@pytest.mark.parametrize("bad", [[], "hi", [{"role": "user"}], [{"role": "bot", "content": "x"}],
                                 [{"role": "user", "content": None}]])
def test_messages_are_validated(bad):
    with pytest.raises(ValueError):
        ScriptedLLM(["x"]).complete(bad)


def test_complete_many_keeps_order_and_errors():
    llm = ScriptedLLM(lambda msgs: msgs[-1]["content"].upper())
    batch = [[{"role": "user", "content": f"q{i}"}] for i in range(20)]
    out = complete_many(llm, batch, max_workers=4)
    assert [c.text for c in out] == [f"Q{i}" for i in range(20)]
    out = complete_many(ScriptedLLM(["only"]), batch[:3], max_workers=1)
    assert out[0].text == "only" and all(isinstance(e, LLMError) for e in out[1:])


# --- approximate counter --------------------------------------------------------------------

def test_approx_count_is_monotone_and_counts_framing():
    assert approx_count("") == 0
    assert approx_count("hello") >= 1
    assert approx_count("hello world " * 100) > approx_count("hello world " * 10)
    assert approx_count(MSG) > approx_count("be brief") + approx_count("hello there")
    # bytes matter: non-ASCII text is not undercounted
    assert approx_count("日本語のテキスト") >= 6


# --- config ---------------------------------------------------------------------------------

def test_presets_load_and_validate():
    for name in ("openai", "tiny-transformers", "scripted"):
        cfg = LLMConfig.from_yaml(ROOT / "configs" / "llm" / f"{name}.yaml")
        assert cfg.backend in ("openai", "transformers", "scripted")
        assert LLMConfig.from_yaml(name) == cfg            # preset name lookup
    cfg = LLMConfig.from_yaml("openai", base_urls=["http://10.0.0.5:8000", "http://h:9/v1/"],
                              temperature=None, max_tokens=7)
    assert cfg.base_urls == ["http://10.0.0.5:8000/v1", "http://h:9/v1"]
    assert cfg.max_tokens == 7 and cfg.temperature == 0.0  # None override = unset flag
    assert LLMConfig.from_dict({"base_url": "http://x:1"}).base_urls == ["http://x:1/v1"]


@pytest.mark.parametrize("override, match", [
    ({"backend": "llamacpp"}, "backend"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"temperature": -1}, "temperature"),
    ({"top_p": 0}, "top_p"),
    ({"timeout_s": 0}, "timeout_s"),
    ({"base_urls": ["ftp://x"]}, "http"),
    ({"base_urls": []}, "base_urls"),
    ({"base_urls": ["http://a:1/v1", "http://a:1"]}, "duplicates"),
    ({"stop": [""]}, "stop"),
    ({"device": "tpu"}, "device"),
    ({"extra_body": {"model": "x"}}, "extra_body"),
    ({"max_retries": True}, "max_retries"),
    ({"nonsense": 1}, "unknown LLM config key"),
    ({"backend": "transformers", "model": "auto"}, "local model folder"),
])
def test_bad_config_is_a_clear_value_error(override, match):
    with pytest.raises(ValueError, match=match):
        LLMConfig.from_yaml("openai", **override)


def test_bad_yaml_and_missing_preset(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("- a\n- b\n")
    with pytest.raises(ValueError, match="mapping"):
        LLMConfig.from_yaml(p)
    with pytest.raises(ValueError, match="no such file or preset"):
        LLMConfig.from_yaml("does-not-exist")


def test_api_key_from_env_and_redacted(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sekrit")
    cfg = LLMConfig.from_dict(api_key_env="MY_KEY")
    assert cfg.resolve_api_key() == "sekrit"
    assert "sekrit" not in repr(cfg.to_dict())
    cfg = LLMConfig.from_dict(api_key="inline", api_key_env="MY_KEY")
    assert cfg.resolve_api_key() == "inline" and cfg.to_dict()["api_key"] == "<set>"
    monkeypatch.delenv("MY_KEY")
    assert LLMConfig.from_dict(api_key_env="MY_KEY").resolve_api_key() is None


def test_make_llm_picks_backend_and_checks_before_loading(tmp_path):
    llm = make_llm(LLMConfig.from_yaml("scripted"))
    assert llm.describe()["backend"] == "scripted" and llm.complete(MSG).text
    o = make_llm(LLMConfig.from_dict(base_urls=["http://127.0.0.1:9/v1"], model="m"))
    assert o.describe()["backend"] == "openai" and o.describe()["urls"] == ["http://127.0.0.1:9/v1"]
    with pytest.raises(ValueError, match="not a local folder"):
        make_llm(LLMConfig.from_dict(backend="transformers", model=str(tmp_path / "missing")))
    with pytest.raises(ValueError, match="responses"):
        make_llm(LLMConfig.from_dict(backend="scripted"))


def test_completion_to_dict():
    c = Completion("t", 1, 2, "m", 0.1, "scripted", "stop", {"k": 1})
    assert "raw" not in c.to_dict() and c.to_dict(with_raw=True)["raw"] == {"k": 1}


# --- light core -----------------------------------------------------------------------------

def test_import_is_light():
    code = textwrap.dedent("""
        import sys
        from scroll.llm import LLMConfig, make_llm, ScriptedLLM
        from scroll.llm.openai_http import OpenAILLM
        llm = make_llm(LLMConfig.from_yaml("openai"))
        llm.describe()
        heavy = [m for m in ("torch", "transformers", "httpx", "openai", "requests", "numpy")
                 if m in sys.modules]
        assert not heavy, heavy
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
