"""A seeded mutation fuzzer for every loader: mutated real files in, one documented way to fail out.

Seeds are the repository's own captures (``tests/data``, ``data``). Each case
is a seed mutated by a few operators (byte flips, truncation, duplicated or
deleted lines, huge and non-finite numbers, NUL bytes, invalid UTF-8, CRLF,
very long lines, very wide headers, deeply nested or mistyped JSON). A loader
run on a case must either return a frame (whose rejects are a
:class:`~workbench.schema.Rejects`) or raise from the workbench's error family;
anything else is a crash, kept under ``tests/data/fuzz/<loader>/`` as a
regression case. Both strace scanners are run on every mutated trace and must
agree (same frame, same rejects).

``python -m tests.fuzzing --cases N [--seed S] [--save]`` runs a long budget
(``make fuzz``) and prints a table per loader: cases, crashes, family errors,
undocumented errors (a family error that does not name the file), silent
losses (a frame from a file whose last line has no line end that does not
reject it as "incomplete last line"), hangs (over :data:`HANG_S` CPU seconds
on an input under 1 MB), scanner disagreements, slowest case (CPU seconds). Every crasher, undocumented
error, silent loss, hang and disagreement is kept under ``tests/data/fuzz/``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CRASHERS = ROOT / "tests" / "data" / "fuzz"
MAX_SEED_BYTES = 200_000
#: a case that uses more CPU seconds than this on an input under 1 MB is a hang
HANG_S = 2.0
#: targets whose inputs are whole documents (JSON), not lines: the incomplete-last-line rule does not apply
DOCUMENT_TARGETS = frozenset({"latency_ghz", "latency_fortio", "fincore", "bpftrace"})
DOCUMENT_FORMATS = frozenset({"ghz", "fortio", "k6_summary", "jmeter_xml"})


# ------------------------------------------------------------------ loaders

def _latency(fmt: str | None) -> Callable[[Path], Any]:
    def run(p: Path) -> Any:
        from workbench.latency import read_latency

        return read_latency(p, format=fmt) if fmt else read_latency(p)
    return run


def _counter(name: str) -> Callable[[Path], Any]:
    def run(p: Path) -> Any:
        from workbench import counters

        return getattr(counters, name)(p)
    return run


def _strace(native: bool) -> Callable[[Path], Any]:
    def run(p: Path) -> Any:
        from workbench.syscalls import read_strace

        return read_strace(p, native=native, check_summary=False)
    return run


def _table(module: str, name: str) -> Callable[[Path], Any]:
    def run(p: Path) -> Any:
        import importlib

        return getattr(importlib.import_module(module), name)(p)
    return run


@dataclass(frozen=True)
class Target:
    """A loader configuration and the seed files it is fuzzed from (globs under the repository root)."""

    name: str
    run: Callable[[Path], Any]
    seeds: tuple[str, ...]
    suffix: str = ".txt"


LAT = "tests/data/latency/"
FMT = "tests/data/formats/"
C = "tests/data/counters/"
TARGETS: tuple[Target, ...] = (
    Target("latency_auto", _latency(None), (LAT + "*", "data/02_low_qps_nagle/*.csv", "data/01_quantized_latency/lab/*.csv")),
    Target("latency_csv", _latency("csv"), (LAT + "*.csv", "data/01_quantized_latency/lab/calls.csv")),
    Target("latency_hlog", _latency("hlog"), (LAT + "*.hlog",)),
    Target("latency_hgrm", _latency("hgrm"), (LAT + "*.hgrm",)),
    Target("latency_wrk", _latency("wrk"), (LAT + "wrk*",)),
    Target("latency_ghz", _latency("ghz"), (LAT + "ghz*",), ".json"),
    Target("latency_fortio", _latency("fortio"), (LAT + "fortio*",), ".json"),
    Target("latency_k6", _latency("k6"), (LAT + "k6*",), ".json"),
    Target("latency_locust", _latency("locust"), (LAT + "locust*",), ".csv"),
    Target("latency_jmeter", _latency("jmeter"), (LAT + "jmeter*",), ".csv"),
    Target("latency_hey", _latency("hey"), (LAT + "hey*",), ".csv"),
    Target("latency_tools", _latency(None), (FMT + "*",)),
    Target("cephfs_metrics", _counter("read_cephfs_metrics"), (C + "cephfs/**/*",)),
    Target("net_dev", _counter("read_net_dev"), (C + "proc/net_dev.txt",)),
    Target("vmstat", _counter("read_vmstat"), (C + "proc/vmstat.txt",)),
    Target("diskstats", _counter("read_diskstats"), (C + "proc/diskstats.txt",)),
    Target("pid_io", _counter("read_pid_io"), (C + "proc/pid_io.txt",)),
    Target("read_ahead_kb", _counter("read_read_ahead_kb"), (C + "sys/bdi_read_ahead_kb.txt",)),
    Target("bpftrace", _counter("read_bpftrace"), (C + "bpftrace/*.txt", C + "bpftrace/*.json", C + "bpftrace/*.ndjson", "data/03_readahead_amplification/sim/probes/*")),
    Target("fincore", _counter("read_fincore"), (C + "residency/fincore*",)),
    Target("vmtouch", _counter("read_vmtouch"), (C + "residency/vmtouch*",)),
    Target("tsdb_csv", _counter("read_tsdb_csv"), ("data/03_readahead_amplification/sim/tsdb_export.csv",), ".csv"),
    Target("node_attributes", _counter("read_node_attributes"), ("data/03_readahead_amplification/sim/nodes.csv",), ".csv"),
    Target("series", _counter("read_series"), ("data/03_readahead_amplification/sim/snapshots/*",)),
    Target("yields_published", _table("workbench.models.yields", "read_published"), ("data/04_event_loop_yields/published.csv",), ".csv"),
    Target("yields_capture", _table("workbench.lab.yields", "read_capture"), ("data/04_event_loop_yields/lab_capture.csv",), ".csv"),
    Target("scaling_times", _table("workbench.models.scaling", "read_iteration_times"), ("data/05_actor_bottlenecks/iteration_times.csv",), ".csv"),
    Target("actor_runs", _table("workbench.lab.actors", "read_runs"), ("data/05_actor_bottlenecks/simulation/runs.csv",), ".csv"),
    Target("strace_reference", _strace(False), ("tests/data/strace/*.txt",)),
)


def seed_files(target: Target) -> list[Path]:
    """The seed files of ``target`` (small enough, deduplicated, sorted)."""
    found: set[Path] = set()
    for pattern in target.seeds:
        found.update(p for p in ROOT.glob(pattern) if p.is_file() and p.suffix != ".md")
    return sorted(p for p in found if p.stat().st_size <= MAX_SEED_BYTES)


# ---------------------------------------------------------------- mutations

def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines)


def m_flip(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\xff"
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def m_truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def m_dup_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    return _join(lines[: i + 1] + lines[i:i + rng.randint(1, 3)] + lines[i + 1:])


def m_del_lines(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    return _join(lines[:i] + lines[i + rng.randint(1, 4):])


_NUMBERS = [b"9" * 400, b"-" + b"9" * 30, b"1e400", b"-1e400", b"nan", b"inf", b"-inf", b"NaN", b"0x1f",
            b"1e-400", b"18446744073709551616", b"-9223372036854775809", b"1.7976931348623157e308", b"",
            b"\xe2\x88\x9e", b"1,5", b"  7  "]


def m_numbers(data: bytes, rng: random.Random) -> bytes:
    import re

    spans = [m.span() for m in re.finditer(rb"\d+(?:\.\d+)?", data)]
    if not spans:
        return data + rng.choice(_NUMBERS)
    out = bytearray(data)
    for a, b in sorted(rng.sample(spans, min(len(spans), rng.randint(1, 4))), reverse=True):
        out[a:b] = rng.choice(_NUMBERS)
    return bytes(out)


def m_nul(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + b"\x00" * rng.randint(1, 5) + data[i:]


def m_bad_utf8(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf8\x88\x80\x80\x80"]) + data[i:]


def m_crlf(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b"\n", b"\r\n") if rng.random() < 0.7 else data.replace(b"\n", b"\r")


def m_long_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    filler = rng.choice([b"a", b"1", b",", b" ", b"(", b"{", b"\"", b"9."]) * rng.choice([10_000, 100_000, 400_000])
    lines.insert(i, filler)
    return _join(lines)


def m_wide_header(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    width = rng.choice([200, 2000, 8000])
    lines[0] = lines[0] + b"".join(b",c%d" % k for k in range(width))
    return _join(lines)


def m_json(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([50, 500, 5000])
    choice = rng.randrange(4)
    if choice == 0:
        return b"[" * depth + b"]" * depth
    if choice == 1:
        return b'{"a":' * depth + b"1" + b"}" * depth
    if choice == 2:  # mistype a JSON value in place
        import re

        return re.sub(rb'":\s*(\[|\{|"[^"]*"|[-\d.eE]+)', rb'": ' + rng.choice([b"5", b'"x"', b"null", b"[]", b"{}"]),
                      data, count=rng.randint(1, 6))
    return data + b"\n" + b'{"type":"x","data":' + b"[" * depth + b"]" * depth + b"}\n"


def m_splice(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    if len(lines) < 2:
        return data
    i, j = sorted(rng.sample(range(len(lines)), 2))
    cut = rng.randrange(len(lines[i]) + 1)
    lines[i] = lines[i][:cut] + lines[j][rng.randrange(len(lines[j]) + 1):]
    return _join(lines)


MUTATORS: tuple[Callable[[bytes, random.Random], bytes], ...] = (
    m_flip, m_truncate, m_dup_lines, m_del_lines, m_numbers, m_nul, m_bad_utf8, m_crlf, m_long_line,
    m_wide_header, m_json, m_splice,
)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three mutations of ``data``."""
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(MUTATORS)(data, rng)
    return data


# ------------------------------------------------------------------ running

@dataclass
class Tally:
    """What happened to one loader's cases."""

    cases: int = 0
    frames: int = 0
    family_errors: int = 0
    crashes: list[tuple[str, str]] = field(default_factory=list)  # (case hash, error)
    disagreements: list[str] = field(default_factory=list)
    undocumented: list[tuple[str, str]] = field(default_factory=list)  # family errors not naming the file
    silent_losses: list[tuple[str, str]] = field(default_factory=list)
    hangs: list[tuple[str, float]] = field(default_factory=list)
    slowest_s: float = 0.0


def check_frame(result: Any) -> str | None:
    """A problem with a returned value, or None: a frame whose rejects are a Rejects value."""
    import pandas as pd

    from workbench.schema import Rejects

    frames = [result] if isinstance(result, pd.DataFrame) else [
        v for v in getattr(result, "__dict__", {}).values() if isinstance(v, pd.DataFrame)]
    if not frames and not isinstance(result, (dict, tuple)):
        return f"returned {type(result).__name__}, not a frame"
    for f in frames:
        rej = f.attrs.get("rejects")
        if rej is not None and not isinstance(rej, Rejects):
            return f"attrs['rejects'] is {type(rej).__name__}, not Rejects"
    return None


def silent_loss(target: Target, data: bytes, result: Any) -> str | None:
    """What a returned frame lost without a word, or None.

    A file whose (decompressed) last line has no line end must reject that
    line as "incomplete last line" (line-oriented loaders; JSON documents are
    judged whole).
    """
    import pandas as pd

    from workbench.errors import WorkbenchError
    from workbench.schema import Rejects
    from workbench.sources import INCOMPLETE, decode, decompress, incomplete_tail

    if target.name in DOCUMENT_TARGETS:
        return None
    try:
        text = decode(decompress(data))
    except WorkbenchError:
        return None
    if text.lstrip().startswith(("{", "[", "<")):
        return None  # a JSON or XML document
    if target.name.startswith("strace"):
        tail = incomplete_tail(text, newline_only=True)
    else:
        tail = incomplete_tail(text)
    if tail is None:
        return None
    frames = [result] if isinstance(result, pd.DataFrame) else [
        v for v in getattr(result, "__dict__", {}).values() if isinstance(v, pd.DataFrame)]
    if any(f.attrs.get("format") in DOCUMENT_FORMATS for f in frames):
        return None
    for f in frames:
        rej = f.attrs.get("rejects")
        if isinstance(rej, Rejects) and any(r[3] == INCOMPLETE for r in rej.rows()):
            return None
    return f"last line {tail[0]} has no line end and is not rejected as {INCOMPLETE!r}"


def run_case(target: Target, path: Path, data: bytes | None = None) -> tuple[str, str]:
    """``("frame" | "family" | "undocumented" | "loss" | "crash", detail)`` of one loader run on one file.

    "undocumented": a family error whose message does not name the file;
    "loss": a frame that lost a line without a word (see :func:`silent_loss`).
    """
    import warnings

    from workbench.errors import WorkbenchError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warnings are allowed; only the outcome is judged
            result = target.run(path)
    except WorkbenchError as exc:
        if path.name not in str(exc):
            return "undocumented", f"{type(exc).__name__} not naming the file: {str(exc)[:200]}"
        return "family", f"{type(exc).__name__}: {str(exc)[:200]}"
    except RecursionError:
        return "crash", "RecursionError"
    except Exception as exc:  # noqa: BLE001 - any other exception is what this looks for
        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
        return "crash", f"{type(exc).__name__} at {where}: {str(exc)[:200]}"
    problem = check_frame(result)
    if problem:
        return "crash", problem
    loss = silent_loss(target, path.read_bytes() if data is None else data, result)
    return ("loss", loss) if loss else ("frame", "")


def compare_scanners(path: Path) -> str | None:
    """None when the C and reference strace scanners give the same frame and rejects, else what differs."""
    import pandas as pd

    from workbench.errors import WorkbenchError
    from workbench.syscalls import native_available, read_strace

    if not native_available():
        return None
    out = []
    for native in (True, False):
        try:
            f = read_strace(path, native=native, check_summary=False)
            out.append(("frame", f))
        except WorkbenchError as exc:
            out.append(("error", f"{type(exc).__name__}: {exc}"))
        except Exception as exc:  # noqa: BLE001 - a crash of either scanner is a finding
            out.append(("crash", f"{'native' if native else 'reference'} {type(exc).__name__}: {str(exc)[:200]}"))
    (ka, a), (kb, b) = out
    if "crash" in (ka, kb):
        return a if ka == "crash" else b
    if ka != kb:
        return f"native {ka} vs reference {kb}: {a if ka == 'error' else b}"
    if ka == "error":
        return None if a == b else f"errors differ: {a} | {b}"
    try:
        pd.testing.assert_frame_equal(a, b)
        pd.testing.assert_frame_equal(a.attrs["rejects"].frame(), b.attrs["rejects"].frame())
    except AssertionError as exc:
        return "frames differ: " + str(exc).splitlines()[0][:200]
    return None


def cases(target: Target, n: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """``n`` mutated cases of ``target``'s seeds: (hash, bytes)."""
    seeds = seed_files(target)
    if not seeds:
        return
    rng = random.Random(f"{target.name}:{seed}")
    datas = [p.read_bytes() for p in seeds]
    for _ in range(n):
        data = mutate(rng.choice(datas), rng)
        yield hashlib.blake2b(data, digest_size=8).hexdigest(), data


def fuzz(target: Target, n: int, seed: int, workdir: Path, save: bool = False,
         scanners: bool = False) -> Tally:
    """Run ``n`` cases of ``target``; crashers are saved under tests/data/fuzz/<target>/ when ``save``."""
    tally = Tally()
    for h, data in cases(target, n, seed):
        path = workdir / f"{target.name}-{h}{target.suffix}"
        path.write_bytes(data)
        t0 = time.process_time()  # CPU seconds: a busy machine does not make a case a hang, a loop does
        kind, detail = run_case(target, path, data)
        took = time.process_time() - t0
        tally.slowest_s = max(tally.slowest_s, took)
        tally.cases += 1
        keep = kind not in ("frame", "family")
        if kind == "frame":
            tally.frames += 1
        elif kind == "family":
            tally.family_errors += 1
        elif kind == "undocumented":
            tally.undocumented.append((h, detail))
        elif kind == "loss":
            tally.silent_losses.append((h, detail))
        else:
            tally.crashes.append((h, detail))
        if took > HANG_S and len(data) < 1_000_000:
            tally.hangs.append((h, took))
            keep = True
        if keep and save:
            d = CRASHERS / target.name
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{h}{target.suffix}").write_bytes(data)
        if scanners:
            diff = compare_scanners(path)
            if diff:
                tally.disagreements.append(f"{h}: {diff}")
                if save:
                    d = CRASHERS / "strace_scanners"
                    d.mkdir(parents=True, exist_ok=True)
                    (d / f"{h}.txt").write_bytes(data)
        path.unlink()
    return tally


def main(argv: list[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200, help="cases per loader")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="loader names")
    ap.add_argument("--save", action="store_true", help="keep crashers under tests/data/fuzz/")
    ap.add_argument("--json", help="write the tallies here")
    args = ap.parse_args(argv)
    total_crashes = 0
    report = {}
    with tempfile.TemporaryDirectory(prefix="workbench-fuzz-") as tmp:
        print(f"{'loader':<20} {'cases':>6} {'frames':>7} {'errors':>7} {'crashes':>8} {'undoc':>6} {'losses':>7} "
              f"{'hangs':>6} {'disagree':>9} {'slowest':>9}")
        for t in TARGETS:
            if args.only and t.name not in args.only:
                continue
            tally = fuzz(t, args.cases, args.seed, Path(tmp), save=args.save, scanners=t.name == "strace_reference")
            total_crashes += (len(tally.crashes) + len(tally.disagreements) + len(tally.undocumented)
                              + len(tally.silent_losses) + len(tally.hangs))
            report[t.name] = {"cases": tally.cases, "frames": tally.frames, "family_errors": tally.family_errors,
                              "crashes": tally.crashes, "undocumented": tally.undocumented,
                              "silent_losses": tally.silent_losses, "hangs": tally.hangs,
                              "disagreements": tally.disagreements, "slowest_s": round(tally.slowest_s, 3)}
            print(f"{t.name:<20} {tally.cases:>6} {tally.frames:>7} {tally.family_errors:>7} {len(tally.crashes):>8} "
                  f"{len(tally.undocumented):>6} {len(tally.silent_losses):>7} {len(tally.hangs):>6} "
                  f"{len(tally.disagreements):>9} {tally.slowest_s:>8.2f}s", flush=True)
            for h, d in tally.crashes[:5]:
                print(f"    crash {h}: {d}")
            for h, d in (tally.undocumented + tally.silent_losses)[:5]:
                print(f"    {h}: {d}")
            for h, s in tally.hangs[:5]:
                print(f"    hang {h}: {s:.1f}s")
            for d in tally.disagreements[:5]:
                print(f"    scanners {d}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if total_crashes else 0


if __name__ == "__main__":
    sys.exit(main())
