"""Numbers for human readers: one formatting layer for tables, findings and figure labels.

Machine outputs (``findings.json``, ``report.json``, frames) keep full precision;
everything a person reads goes through here, so a page never shows
``1.563053e+11`` next to a chart in GiB, ``120.0`` for a count or two spellings
of "times":

- :func:`number` — significant digits without scientific notation (``0.0337``, ``40.6``, ``12,345``);
- :func:`count` — whole numbers with thousands separators (``100,537``);
- :func:`size` — bytes in IEC units (``154 KiB``, ``3.8 GiB``);
- :func:`duration` — seconds in the unit that fits (``48.2 ms``, ``3.1 µs``, ``2.5 min``);
- :func:`when` — epoch seconds as a UTC date and time;
- :func:`times` — a ratio with the one multiplication sign (``14.1×``);
- :func:`value` — any finding value with its unit (dicts and lists element by element);
- :func:`table` — a DataFrame styled with these, chosen by column name (``_bytes``, ``_s``, ``_ms``, counts).
"""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler

__all__ = ["count", "duration", "number", "percent", "size", "table", "times", "value", "when"]

TIMES = "×"
_IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_DURATIONS = ((3600.0, "h"), (60.0, "min"), (1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def number(x: float | int | None, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits, never in scientific notation; "—" when missing."""
    if _missing(x):
        return "—"
    x = float(x)  # type: ignore[arg-type]
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    if mag >= digits - 1:
        return f"{x:,.0f}"
    decimals = max(0, digits - 1 - mag)
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def count(n: float | int | None) -> str:
    """A whole number with thousands separators (a float that is not whole keeps its decimals)."""
    if _missing(n):
        return "—"
    f = float(n)  # type: ignore[arg-type]
    if math.isfinite(f) and f.is_integer():
        return f"{int(f):,}"
    return number(f)


def size(n_bytes: float | int | None, digits: int = 3) -> str:
    """Bytes in IEC units: ``512 B``, ``154 KiB``, ``3.8 GiB``."""
    if _missing(n_bytes):
        return "—"
    v = float(n_bytes)  # type: ignore[arg-type]
    sign = "−" if v < 0 else ""
    v = abs(v)
    k = 0
    while v >= 1024 and k < len(_IEC) - 1:
        v /= 1024
        k += 1
    return f"{sign}{count(v) if k == 0 else number(v, digits)} {_IEC[k]}"


def duration(seconds: float | int | None, digits: int = 3) -> str:
    """Seconds in the unit that fits: ``48.2 ms``, ``3.1 µs``, ``1.5 s``, ``2.5 min``, ``1.2 h``."""
    if _missing(seconds):
        return "—"
    s = float(seconds)  # type: ignore[arg-type]
    if s == 0 or not math.isfinite(s):
        return f"{number(s)} s"
    for scale, unit in _DURATIONS:
        if abs(s) >= scale * 0.9995:
            return f"{number(s / scale, digits)} {unit}"
    return f"{number(s / 1e-9, digits)} ns"


def when(epoch_s: float | int | None) -> str:
    """Epoch seconds as ``YYYY-MM-DD HH:MM:SS UTC`` (sub-second times keep milliseconds)."""
    if _missing(epoch_s):
        return "—"
    t = dt.datetime.fromtimestamp(float(epoch_s), dt.UTC)  # type: ignore[arg-type]
    fmt = "%Y-%m-%d %H:%M:%S.%f" if t.microsecond else "%Y-%m-%d %H:%M:%S"
    text = t.strftime(fmt)
    return (text[:-3] if t.microsecond else text) + " UTC"


def times(ratio: float | int | None, digits: int = 3) -> str:
    """A ratio with the multiplication sign: ``14.1×``."""
    return "—" if _missing(ratio) else f"{number(ratio, digits)}{TIMES}"


def percent(fraction: float | int | None, digits: int = 3) -> str:
    """A fraction as a percentage: ``0.419`` → ``41.9 %``."""
    return "—" if _missing(fraction) else f"{number(100 * float(fraction), digits)} %"  # type: ignore[arg-type]


_UNIT_FORMS: dict[str, Callable[[Any], str]] = {
    "bytes": size, "b": size, "byte": size,
    "s": duration, "sec": duration, "seconds": duration,
    "ms": lambda v: duration(float(v) / 1e3), "us": lambda v: duration(float(v) / 1e6),
    "µs": lambda v: duration(float(v) / 1e6), "ns": lambda v: duration(float(v) / 1e9),
    "×": times, "x": times, "ratio": times,
    "fraction": percent, "%": lambda v: f"{number(v)} %",
    "epoch_s": when, "utc": when,
    "count": count, "calls": lambda v: f"{count(v)} calls", "requests": lambda v: f"{count(v)} requests",
    "lines": lambda v: f"{count(v)} lines", "rows": lambda v: f"{count(v)} rows",
}


def value(v: Any, unit: str | None = None) -> str:
    """A finding's value as a person reads it, in ``unit`` (known units are rescaled to fit)."""
    form = _UNIT_FORMS.get((unit or "").strip().lower()) if unit else None

    def one(x: Any) -> str:
        if isinstance(x, bool) or x is None:
            return "—" if x is None else ("yes" if x else "no")
        if isinstance(x, (int, float)):
            if form is not None:
                return form(x)
            text = count(x) if isinstance(x, int) else number(x)
            return f"{text} {unit}" if unit else text
        if isinstance(x, Mapping):
            return "{" + ", ".join(f"{k}: {one(y)}" for k, y in _ordered(x)) + "}"
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(one(y) for y in x) + "]" if x else "none"
        return str(x)

    return one(v)


def _ordered(d: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """Items in numeric key order when every key is a number ("10" after "5")."""
    try:
        return sorted(d.items(), key=lambda kv: float(kv[0]))
    except (TypeError, ValueError):
        return list(d.items())


def _column_form(name: str, frame: pd.DataFrame) -> Callable[[Any], str] | None:
    import pandas as pd

    col = frame[name]
    lower = str(name).lower()
    if pd.api.types.is_bool_dtype(col):
        return lambda v: "—" if _missing(v) else ("yes" if v else "no")
    if not pd.api.types.is_numeric_dtype(col):
        return None
    if lower.endswith("_bytes") or lower in ("bytes", "size"):
        return size
    looks_epoch = len(col.dropna()) > 0 and bool((col.dropna() > 1e8).all())
    if lower.endswith(("_epoch_s", "_utc")) or (lower in ("timestamp", "timestamp_s", "start_s", "end_s")
                                               and looks_epoch):
        return when
    if lower.endswith("_per_s"):
        return lambda v: "—" if _missing(v) else f"{number(v)}/s"
    if lower.endswith("_ms"):
        return lambda v: duration(None if _missing(v) else float(v) / 1e3)
    if lower.endswith("_us"):
        return lambda v: duration(None if _missing(v) else float(v) / 1e6)
    if lower.endswith("_s"):
        return duration
    if lower.endswith(("ratio", "_x", "speedup", "amplification")):
        return times
    if lower.endswith(("fraction", "share")):
        return percent
    if pd.api.types.is_integer_dtype(col):
        return count
    return number


def table(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> Styler:
    """``frame`` styled for reading: numbers formatted by column name, text escaped, no index."""
    forms = {c: f for c in (columns or frame.columns) if (f := _column_form(c, frame)) is not None}
    return frame.style.format(forms, na_rep="—", escape="html").hide(axis="index")  # type: ignore[arg-type]
