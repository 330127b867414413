"""The simulated overnight series refuses parameters that give no series."""
from __future__ import annotations

import pytest

from workbench.errors import UsageError
from workbench.sim.overnight import simulate_overnight


@pytest.mark.parametrize(("hours", "every_s"), [(0.0, 120.0), (1.0, 0.0), (0.05, 120.0), (-1.0, 60.0)])
def test_too_short_or_non_positive_is_named(hours: float, every_s: float) -> None:
    with pytest.raises(UsageError, match=rf"hours={hours!r}, every_s={every_s!r} give \d+ calls"):
        simulate_overnight(hours=hours, every_s=every_s)


def test_two_calls_are_enough_and_the_default_is_unchanged() -> None:
    s = simulate_overnight(hours=240 / 3600, every_s=120.0)
    assert len(s) == 2 and list(s.columns) == ["timestamp_s", "latency_s", "ping_s", "stall_rate", "stalls"]
    assert len(simulate_overnight()) == int(14.0 * 3600 / 120.0)
