"""Decisions the library makes from data: a verdict, the evidence it rests on, and its caveats.

Every rule that answers a question of an investigation ("is the tail worse at
low rate?", "which side's ``TCP_NODELAY`` suffices?", "is a pooled exponent
warranted?") is a library function that returns a :class:`Decision` (or a
subclass with extra typed fields). A notebook renders it; it never decides in a
cell. ``inconclusive`` is an honest answer: the evidence says why.

- ``verdict`` — ``"yes"``, ``"no"`` or ``"inconclusive"`` (:data:`VERDICTS`);
- ``because`` — one sentence built from the evidence, true whatever the input;
- ``evidence`` — the numbers it rests on, units in the keys (``p99_low_ms``, ``n_rates``);
- ``caveats`` — what limits the answer (few samples, a CI that touches the bound, assumptions).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import UsageError

Verdict = Literal["yes", "no", "inconclusive"]
VERDICTS: tuple[Verdict, ...] = ("yes", "no", "inconclusive")

__all__ = ["VERDICTS", "Decision", "Verdict", "decide", "intervals_disjoint"]


@dataclass(frozen=True)
class Decision:
    """The answer to one question, with its evidence and caveats (see the module docstring)."""

    question: str
    verdict: Verdict
    because: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    caveats: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise UsageError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def yes(self) -> bool:
        """True only for a ``yes`` verdict (``inconclusive`` is not a yes)."""
        return self.verdict == "yes"

    @property
    def no(self) -> bool:
        """True only for a ``no`` verdict."""
        return self.verdict == "no"

    def summary(self) -> dict[str, Any]:
        """JSON-ready form for a finding: verdict, because, evidence (non-finite numbers as None), caveats."""
        def clean(v: Any) -> Any:
            if isinstance(v, float) and not math.isfinite(v):
                return None
            if isinstance(v, Mapping):
                return {str(k): clean(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v

        return {"verdict": self.verdict, "because": self.because, "evidence": clean(dict(self.evidence)),
                "caveats": list(self.caveats)}

    def __str__(self) -> str:
        text = f"{self.question} {self.verdict}: {self.because}"
        if self.caveats:
            text += " Caveats: " + "; ".join(self.caveats) + "."
        return text


def decide(question: str, *, yes: bool, no: bool, because_yes: str, because_no: str,
           because_inconclusive: str, evidence: Mapping[str, Any] | None = None,
           caveats: tuple[str, ...] = ()) -> Decision:
    """A :class:`Decision` from two tests that must not both hold: ``yes`` → yes, ``no`` → no, else inconclusive."""
    if yes and no:
        raise UsageError(f"{question!r}: the evidence cannot support both yes and no")
    verdict: Verdict = "yes" if yes else "no" if no else "inconclusive"
    because = because_yes if yes else because_no if no else because_inconclusive
    return Decision(question, verdict, because, dict(evidence or {}), tuple(caveats))


def intervals_disjoint(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """True when two (low, high) intervals do not overlap (NaN bounds: False, nothing is known)."""
    lo_a, hi_a = a
    lo_b, hi_b = b
    if not all(math.isfinite(x) for x in (lo_a, hi_a, lo_b, hi_b)):
        return False
    return hi_a < lo_b or hi_b < lo_a
