"""The sharded maps behind the index's vocabulary and the stem cache."""
from __future__ import annotations

import pytest

from scroll.search import tokens as T
from scroll.search.vocab import SHARDS, ShardedDict, Vocabulary


def test_vocabulary_ids_are_dense_in_first_seen_order():
    v = Vocabulary()
    words = [f"w{i % 700}" for i in range(2000)]
    ids = [v.id(w) for w in words]
    assert ids[:700] == list(range(700)) and ids[700:] == ids[:700] * 1 + ids[:600]
    assert len(v) == 700 and v.terms == [f"w{i}" for i in range(700)]
    assert v.get("w5") == 5 and v.get("nope") is None and "w699" in v and "w700" not in v
    again = Vocabulary(v.terms)                       # reloaded from vocab.txt: the same ids
    assert all(again.get(t) == i for i, t in enumerate(v.terms)) and again.terms == v.terms
    with pytest.raises(ValueError, match="twice"):
        Vocabulary(["a", "b", "a"])


def test_sharded_dict_is_a_map():
    d = ShardedDict()
    for i in range(5000):
        d[f"k{i}"] = i
    assert len(d) == 5000 and d["k42"] == 42 and d.get("x", -1) == -1 and "k4999" in d
    assert sorted(d, key=lambda k: d[k]) == [f"k{i}" for i in range(5000)]
    assert len(d.shards()) == SHARDS and all(d.shards())       # spread over every shard


def test_stem_cache_stays_bounded_and_every_call_gets_all_its_stems(monkeypatch):
    monkeypatch.setattr(T, "_SHARD_MAX", 3)           # 64 shards x 3 entries at most
    tok = T.Tokenizer()
    for start in range(0, 3000, 500):
        words = {f"runnings{i}x" for i in range(start, start + 500)} | {"running", "cats"}
        stems = tok._stem_all(words)
        assert set(stems) == words and stems["running"] == "run" and stems["cats"] == "cat"
        assert len(tok._stems) <= SHARDS * 3
    assert tok.terms("The cats were running") == ["cat", "were", "run"]


def test_append_vocab_keeps_exactly_the_vouched_lines(tmp_path):
    from scroll.search.store import append_vocab

    def lines():
        return (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()

    append_vocab(tmp_path, 0, ["apple", "pear"])
    append_vocab(tmp_path, 2, ["plum"])                      # as this process left it: no re-read
    assert lines() == ["apple", "pear", "plum"]
    with open(tmp_path / "vocab.txt", "ab") as fh:           # a crash mid-append left a partial line
        fh.write(b"half")
    append_vocab(tmp_path, 3, ["fig"])
    assert lines() == ["apple", "pear", "plum", "fig"]
    (tmp_path / "vocab.txt").unlink()                        # another process rebuilt the index
    (tmp_path / "vocab.txt").write_text("zeta\néta\nkiwi\nlime\n", encoding="utf-8")
    append_vocab(tmp_path, 2, ["date"])                      # its manifest vouches for 2 lines
    assert lines() == ["zeta", "éta", "date"]
