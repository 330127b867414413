"""Old plot function names kept for one release: each forwards to its ``plot_*`` name with a warning."""
from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any


def forwarder(module: str, renamed: Mapping[str, str], namespace: Mapping[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that returns ``namespace[renamed[old]]`` for an old name, with a DeprecationWarning."""

    def __getattr__(name: str) -> Any:
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is now {module}.{new}; the old name works until the next release",
                      DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__
