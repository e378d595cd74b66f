"""The proxy's settings: a dataclass filled from `configs/proxy.yaml`, overridden by flags,
validated before anything listens (no web imports here: the CLI builds one first)."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from scroll import env

RETRIEVAL_MODES = ("search", "off")            # "search": top-k ms.search for the newest user message
CONVERSATION_KEYS = ("auto", "header", "first-messages")
ADDITION_ROLES = ("system", "user")
TOKEN_COUNTERS = ("auto", "approximate")
HEADER_NAME = re.compile(r"^[A-Za-z0-9-]{1,64}$")


class ProxyConfigError(ValueError):
    """A proxy setting that cannot work (the message names the key)."""


@dataclass
class ProxyConfig:
    upstream: str = "http://127.0.0.1:8000/v1"  # the OpenAI-compatible server (base URL, with /v1)
    db: Path | None = None                       # the event log (None: scroll.env.default_db())
    budget: int = 4096                 # prompt tokens the upstream may receive (hard; never exceeded)
    soft_share: float = 0.7            # over the budget, evict oldest turns until the view is <= this share
    index_share: float = 0.15          # of the budget, at most, for the headline index of evicted ranges
    retrieval: str = "search"          # "search": top-k events for the newest user message; "off"
    top_k: int = 5                     # events retrieved per request
    retrieval_share: float = 0.2       # of the budget, at most, for the retrieved block
    retrieval_event_chars: int = 600   # each retrieved event's text is clipped to this
    addition_role: str = "system"      # role of the proxy's inserted messages (index, retrieved block)
    conversation_key: str = "auto"     # auto: the header when present, else the first messages' hash
    conversation_header: str = "X-Scroll-Conversation"
    token_counter: str = "auto"        # auto: the upstream's /tokenize when it has one, else approximate
    approx_margin: float = 0.1         # with the approximate counter, keep this share of the budget free
    tier_cap: int = 4                  # headline index: entries per tier before a merge (few, coarse entries)
    timeout_s: float = 300.0           # upstream read timeout
    upstream_api_key_env: str | None = None  # env var holding the upstream's key (None: no key sent)
    max_body_bytes: int = 32 << 20     # a request body larger than this is refused (413)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> "ProxyConfig":
        parts = urlsplit(self.upstream or "")
        checks = [
            (parts.scheme in ("http", "https") and bool(parts.hostname),
             f"upstream must be an http(s) base URL like http://127.0.0.1:8000/v1, got {self.upstream!r}"),
            (self.budget >= 256, "budget must be >= 256 tokens"),
            (0.1 <= self.soft_share <= 1.0, "soft_share must be in [0.1, 1]"),
            (0.0 <= self.index_share <= 0.5, "index_share must be in [0, 0.5]"),
            (self.retrieval in RETRIEVAL_MODES, f"retrieval must be one of {RETRIEVAL_MODES}"),
            (1 <= self.top_k <= 100, "top_k must be in [1, 100]"),
            (0.0 < self.retrieval_share <= 0.5, "retrieval_share must be in (0, 0.5]"),
            (self.retrieval_event_chars >= 40, "retrieval_event_chars must be >= 40"),
            (self.addition_role in ADDITION_ROLES, f"addition_role must be one of {ADDITION_ROLES}"),
            (self.conversation_key in CONVERSATION_KEYS, f"conversation_key must be one of {CONVERSATION_KEYS}"),
            (bool(HEADER_NAME.match(self.conversation_header or "")),
             "conversation_header must be an HTTP header name (letters, digits, '-')"),
            (self.token_counter in TOKEN_COUNTERS, f"token_counter must be one of {TOKEN_COUNTERS}"),
            (0.0 <= self.approx_margin < 0.5, "approx_margin must be in [0, 0.5)"),
            (self.tier_cap >= 2, "tier_cap must be >= 2"),
            (self.timeout_s > 0, "timeout_s must be > 0"),
            (self.max_body_bytes >= 1024, "max_body_bytes must be >= 1024"),
            (self.index_share + self.retrieval_share < self.soft_share,
             "index_share + retrieval_share must stay below soft_share (room for the recent turns)"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ProxyConfigError(f"proxy config: {msg}")
        self.upstream = self.upstream.rstrip("/")
        return self

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> "ProxyConfig":
        """`path`, else `proxy.yaml` on the config search path (scroll.env.config_dirs), else
        the built-in defaults; then `overrides` (None values: flags not given)."""
        if path is None:
            path = env.config_file("proxy.yaml")
        data: dict[str, Any] = {}
        if path is not None:
            try:
                data = dict(env.read_yaml(path, section="proxy"))
            except ValueError as e:
                raise ProxyConfigError(str(e)) from None
        data.update({k: v for k, v in overrides.items() if v is not None})
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ProxyConfigError(f"proxy config: unknown keys {sorted(unknown)} (known: {sorted(known)})")
        if data.get("db") is not None:
            data["db"] = Path(data["db"])
        try:
            return cls(**data)
        except TypeError as e:
            raise ProxyConfigError(f"proxy config: {e}") from None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["db"] = str(self.db) if self.db else None
        return d
