"""Who may reach a surface (viewer, MCP server, proxy): loopback by default, a token for anything else.

    check_bind(host, token, surface="the viewer", reach="the log would be readable by anyone who can reach it",
               error=AccessError)
    is_loopback("127.0.0.1"), loopback_hosts("127.0.0.1")   # Host header values a loopback bind answers to

One rule for every surface: a bind address that is not loopback (0.0.0.0, a LAN address, a host
name other than localhost, which may resolve anywhere) is refused without a token, and a token
must be at least MIN_TOKEN characters.
"""
from __future__ import annotations

import ipaddress

MIN_TOKEN = 16
LOOPBACK_NAMES = ("localhost",)


class BindRefused(ValueError):
    """A bind or token setting a surface refuses."""


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # any other host name may resolve anywhere


def loopback_hosts(host: str) -> tuple[str, ...]:
    """Host header values a loopback bind answers to (the DNS-rebinding check)."""
    return tuple(dict.fromkeys([host, "localhost", "127.0.0.1", "::1", "[::1]"]))


def check_bind(host: str, token: str | None, *, surface: str, reach: str,
               error: type[ValueError] = BindRefused) -> None:
    """Raise `error` for a token shorter than MIN_TOKEN or a non-loopback `host` without a token."""
    if token is not None and len(token) < MIN_TOKEN:
        raise error(f"--token must be at least {MIN_TOKEN} characters (e.g. `python -c 'import secrets; "
                    "print(secrets.token_urlsafe(24))'`)")
    if not is_loopback(host) and not token:
        raise error(f"refusing to bind {surface} to {host}: it is not a loopback address, and {reach}; it needs a "
                    "bearer token (--token or --token-file). Bind 127.0.0.1 (the default) to serve this machine only")
