"""The transformers backend with the tiny random Qwen3 (distill/tiny.py): loads offline,
generates (greedy, sampled, stop strings), counts tokens with its own tokenizer."""
from __future__ import annotations

import os
import socket

import pytest

from scroll.llm import LLMConfig, LLMError, make_llm

pytestmark = pytest.mark.model
MSG = [{"role": "system", "content": "You write Python."},
       {"role": "user", "content": "def add(a, b): return the sum"}]


@pytest.fixture(scope="module")
def tiny_llm(tiny_model_dir):  # noqa: F811
    llm = make_llm(LLMConfig.from_yaml("tiny-transformers", model=str(tiny_model_dir),
                                       max_tokens=12, device="cpu"))
    yield llm
    llm.close()


def test_loads_offline_without_network(tiny_model_dir, monkeypatch):  # noqa: F811
    def no_net(*a, **k):
        raise AssertionError(f"network access attempted: {a!r}")

    monkeypatch.setattr(socket, "create_connection", no_net)
    monkeypatch.setattr(socket.socket, "connect", no_net)
    llm = make_llm(LLMConfig.from_dict(backend="transformers", model=str(tiny_model_dir),
                                       max_tokens=4))
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    c = llm.complete(MSG)
    assert c.backend == "transformers" and c.completion_tokens <= 4
    d = llm.describe()
    assert d["backend"] == "transformers" and d["device"] == "cpu" and d["params"] > 1_000_000
    from scroll.provenance import cpu_auto_dtype  # issue #30 item 14: `serve`'s rule (bf16 only with AMX-BF16)

    assert d["dtype"] == cpu_auto_dtype() and cpu_auto_dtype(True) == "bfloat16" and cpu_auto_dtype(False) == "float32"
    llm.close()
    with pytest.raises(LLMError, match="after close"):
        llm.complete(MSG)


def test_greedy_is_deterministic_and_counts_match(tiny_llm):
    a, b = tiny_llm.complete(MSG), tiny_llm.complete(MSG)
    assert a.text == b.text and isinstance(a.text, str)
    assert a.model == "tiny-qwen3" and a.finish_reason in ("stop", "length")
    assert 1 <= a.completion_tokens <= 12
    assert a.prompt_tokens == tiny_llm.count_tokens(MSG)     # the prompt the model read
    assert tiny_llm.token_counter_exact is True
    tok = tiny_llm.tokenizer
    text = "print(sum(range(10)))"
    assert tiny_llm.count_tokens(text) == len(tok(text, add_special_tokens=False)["input_ids"])
    assert tiny_llm.count_tokens("") == 0


def test_max_tokens_length_and_stop_strings(tiny_llm):
    c = tiny_llm.complete(MSG, max_tokens=3)
    assert c.completion_tokens <= 3
    full = tiny_llm.complete(MSG, max_tokens=12)
    if full.finish_reason != "length" or len(full.text.strip()) < 3:
        pytest.skip(f"tiny model ended early ({full.text!r}); no stop string to test")
    if True:
        assert c.finish_reason == "length"
        stop = full.text.strip()[1:3]
        s = tiny_llm.complete(MSG, max_tokens=12, stop=[stop])
        assert stop not in s.text and s.finish_reason == "stop"
        assert full.text.startswith(s.text)
        assert s.raw["stopped_on"] == "stop_string"


def test_sampling_with_seed_is_reproducible(tiny_model_dir):  # noqa: F811
    cfg = LLMConfig.from_dict(backend="transformers", model=str(tiny_model_dir), max_tokens=8,
                              temperature=1.0, seed=123)
    llm = make_llm(cfg)
    a, b = llm.complete(MSG), llm.complete(MSG)
    assert a.text == b.text and llm.describe()["temperature"] == 1.0
    llm.close()


def test_openai_backend_counts_with_local_tokenizer(tiny_llm, tiny_model_dir):  # noqa: F811
    # no server is contacted: tokenizer_path gives exact counts locally
    o = make_llm(LLMConfig.from_dict(base_urls=["http://127.0.0.1:9/v1"], model="tiny-qwen3",
                                     tokenizer_path=str(tiny_model_dir)))
    assert o.token_counter_exact is True
    assert o.count_tokens(MSG) == tiny_llm.count_tokens(MSG)
    assert o.count_tokens("x = 1") == tiny_llm.count_tokens("x = 1")


def test_a_missing_model_folder_names_scroll_models_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SCROLL_MODELS_DIR", str(tmp_path / "models"))
    with pytest.raises(ValueError, match=r"SCROLL_MODELS_DIR .*models\)"):
        make_llm(LLMConfig.from_dict(backend="transformers", model="no-such-model", max_tokens=4))
