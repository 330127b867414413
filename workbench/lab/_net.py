"""The one address check every network experiment goes through: loopback only."""
from __future__ import annotations

import ipaddress


def check_loopback(host: str, lab: str = "lab") -> str:
    """Return ``host`` if it is a loopback address (127.0.0.0/8, ::1; ``localhost`` → 127.0.0.1).

    Raises ValueError for anything else (other addresses and host names), naming the experiment.
    """
    if host == "localhost":
        return "127.0.0.1"
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"the {lab} lab only talks to loopback addresses; {host!r} is not an IP literal "
                         "(use 127.0.0.1, ::1 or localhost)") from None
    if not addr.is_loopback:
        raise ValueError(f"the {lab} lab only talks to loopback addresses (127.0.0.0/8, ::1); refusing {host}")
    return host
