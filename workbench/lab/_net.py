"""The one address check every network experiment goes through: loopback only.

Every function of a lab that opens an inet socket calls :func:`check_loopback`
on its ``host`` first, in the parent process and in the child processes alike
(they run as modules of this package, so they import it like any other code).
"""
from __future__ import annotations

import ipaddress

from ..errors import ArgumentTypeError, UsageError


def check_loopback(host: str, lab: str = "") -> str:
    """Return ``host`` if it is a loopback address (127.0.0.0/8, ::1; ``localhost`` → 127.0.0.1).

    Anything else — other addresses, the wildcard ``0.0.0.0``, IPv4-mapped IPv6
    addresses, scoped IPv6 literals (``::1%eth0``), host names that would need a
    resolver — raises
    :class:`~workbench.errors.UsageError` naming the ``host`` parameter, the
    experiment (``lab``) and what is accepted.
    """
    who = f"the {lab} lab" if lab else "a lab experiment"
    if not isinstance(host, str):
        raise ArgumentTypeError(f"{who}: host must be a loopback address as text, got {type(host).__name__}")
    if host == "localhost":
        return "127.0.0.1"
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        raise UsageError(f"{who} only talks to loopback addresses; host={host!r} is not an IP literal "
                         "(use 127.0.0.1, ::1 or localhost)") from None
    if not addr.is_loopback:
        raise UsageError(f"{who} only talks to loopback addresses (127.0.0.0/8, ::1); refusing host={host}")
    if isinstance(addr, ipaddress.IPv6Address) and addr.scope_id is not None:
        raise UsageError(f"{who}: host={host!r} carries a zone index (%{addr.scope_id}); loopback has none, "
                         "use ::1")
    return host
