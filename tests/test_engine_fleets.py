"""engine="dask" on fleets: every file parsed once, and the same result on a real multi-process cluster."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

import workbench.counters.series as series_mod  # noqa: E402
import workbench.latency._read as latency_mod  # noqa: E402
import workbench.syscalls._read as strace_mod  # noqa: E402
from workbench import engine  # noqa: E402
from workbench.counters import read_series  # noqa: E402
from workbench.latency import read_latency  # noqa: E402
from workbench.schema import Rejects, rejects_of  # noqa: E402
from workbench.syscalls import read_strace  # noqa: E402

# the same fleets, and the in-process cluster fixture of the engine tests
from .test_engine import FF_SET, HLOGS, PROC, TRACES, client  # noqa: E402, F401

LOG_ENV = "WORKBENCH_TEST_PARSE_LOG"

# the loaders as they are, before a test swaps in a counting one (workers import this module afresh)
_LATENCY_PART = latency_mod._read_part
_STRACE_PART = strace_mod._read_trace
_SERIES_PART = series_mod._read_part


def _note(name: str) -> None:
    """Append one line per parse to the file named by $WORKBENCH_TEST_PARSE_LOG (any process may write)."""
    with open(os.environ[LOG_ENV], "a") as fh:
        fh.write(f"{os.getpid()} {name}\n")


def _count_latency(path: Path, **kw: Any) -> pd.DataFrame:
    _note(str(path))
    return _LATENCY_PART(path, **kw)


def _count_strace(paths: list[Path], opts: dict[str, Any]) -> pd.DataFrame:
    _note(",".join(map(str, paths)))
    return _STRACE_PART(paths, opts)


def _count_series(path: Path, host: str | None, strict: bool) -> pd.DataFrame:
    _note(str(path))
    return _SERIES_PART(path, host, strict)


def _parses(log: Path) -> list[str]:
    """The parts parsed, sorted."""
    return sorted(line.split(" ", 1)[1] for line in log.read_text().splitlines()) if log.exists() else []


def _parsers(log: Path) -> set[int]:
    """The process ids that parsed."""
    return {int(line.split(" ", 1)[0]) for line in log.read_text().splitlines()}


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every per-file loader of the three families counts its calls in the returned log file."""
    log = tmp_path / "parses.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    monkeypatch.setattr(latency_mod, "_read_part", _count_latency)
    monkeypatch.setattr(strace_mod, "_read_trace", _count_strace)
    monkeypatch.setattr(series_mod, "_read_part", _count_series)
    return log


def _log(path: Path, host: str, t0: float, extra: str = "") -> Path:
    snaps = []
    for k, ts in enumerate((t0, t0 + 10)):
        for name, proc_path in (("net_dev.txt", "/proc/net/dev"), ("vmstat.txt", "/proc/vmstat")):
            text = (PROC / name).read_text()
            snaps.append(f"#== snapshot ts={ts + 0.001 * k} host={host} path={proc_path}\n{text}")
    path.write_text("".join(snaps) + extra)
    return path


def _fleet(tmp_path: Path) -> dict[str, tuple[Any, list[str]]]:
    """Per loader family: the sources of a small fleet with one bad file, and the parts' names."""
    bad_hlog = tmp_path / "bad.hlog"
    bad_hlog.write_text(HLOGS[0].read_text() + "not,an,interval\n")
    bad_trace = tmp_path / "bad.txt"
    bad_trace.write_text(TRACES[2].read_text() + "this is not strace output\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    snaps = [_log(logs / "fe01.snapshots", "fe01", 1000.0), _log(logs / "fe02.snapshots", "fe02", 1001.0),
             _log(logs / "fe03.snapshots", "fe03", 1002.0, "#== snapshot ts=1100 host=fe03 path=/proc/nope\nx 1\n")]
    hlogs = [*HLOGS[:3], bad_hlog]
    traces = [*TRACES[:3], *FF_SET, bad_trace]
    return {
        "latency": (hlogs, [str(p) for p in hlogs]),
        "strace": (traces, [str(p) for p in TRACES[:3]] + [",".join(map(str, FF_SET)), str(bad_trace)]),
        "counters": (str(logs), [str(p) for p in snaps]),
    }


READERS = {"latency": read_latency, "strace": read_strace, "counters": read_series}


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize("family", sorted(READERS))
def test_each_file_is_parsed_once(family: str, counting: Path, tmp_path: Path) -> None:
    sources, parts = _fleet(tmp_path)[family]
    ddf = READERS[family](sources, engine="dask")
    assert ddf.npartitions == len(parts)
    # learning the columns parsed the first part only, once
    assert _parses(counting) == [parts[0]]
    out = engine.compute(ddf)
    # frame, rejects and attrs of the whole fleet: every part parsed exactly once in all
    assert _parses(counting) == sorted(parts)
    assert len(out.attrs["parts"]) == len(parts) and len(out.attrs["rejects"]) >= 1
    # the first part stays on the cluster as partition 0: computing again never parses it again
    # (the others at most once more: results the scheduler still holds may be reused)
    def frame_again() -> None:
        pd.testing.assert_frame_equal(ddf.compute(), out)

    def rejects_again() -> None:
        assert engine.rejects(ddf) == out.attrs["rejects"]

    for again in (frame_again, rejects_again):
        counting.unlink(missing_ok=True)
        again()
        seen = _parses(counting)
        assert parts[0] not in seen and len(seen) == len(set(seen)) and set(seen) <= set(parts[1:])


def _pandas_parts(family: str, sources: Any) -> list[pd.DataFrame]:
    """What the pandas path gives for each part of the fleet, one part at a time."""
    if family == "latency":
        return [read_latency(p).assign(file=str(p)) for p in sources]
    if family == "strace":
        return [read_strace(p) for p in sources[:3]] + [read_strace(FF_SET)] + [read_strace(sources[-1])]
    return [read_series(p) for p in sorted(Path(sources).glob("*.snapshots"))]


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The per-part pandas frames joined the way the dask frame is: categories unioned in order."""
    cats = [c for c, t in frames[0].dtypes.items() if isinstance(t, pd.CategoricalDtype)]
    out = pd.concat([f.assign(**{c: f[c].astype(object) for c in cats}) for f in frames], ignore_index=True)
    for c in cats:
        u = pd.api.types.union_categoricals([f[c].array for f in frames], ignore_order=True)
        out[c] = pd.Categorical(out[c], categories=u.categories)
    return out


def _plain(attrs: dict[Any, Any]) -> dict[Any, Any]:
    """attrs without rejects, side tables as their frames' records (comparable across processes)."""
    out = {}
    for k, v in attrs.items():
        if k == "rejects":
            continue
        if hasattr(v, "frame"):
            v = v.frame().to_dict("records")
        elif isinstance(v, pd.DataFrame):
            v = v.to_dict("records")
        out[k] = v
    return out


def test_a_multi_process_cluster_gives_the_pandas_result(counting: Path, tmp_path: Path) -> None:
    """Two worker processes on 127.0.0.1: frame, rejects and attrs as the pandas path, each file parsed once."""
    fleet = _fleet(tmp_path)
    with distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  protocol="tcp://", **engine.LOOPBACK_HTTP) as cluster, \
            distributed.Client(cluster, set_as_default=False) as cl:
        workers = cl.scheduler_info()["workers"]
        assert len(workers) == 2 and all(a.startswith("tcp://127.0.0.1:") for a in workers)
        pids = set(cl.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        # not the default client: engine.compute runs on the cluster the frame was made with
        got = {fam: engine.compute(READERS[fam](src, engine="dask", client=cl)) for fam, (src, _) in fleet.items()}
    assert _parses(counting) == sorted(p for _, parts in fleet.values() for p in parts)
    assert _parsers(counting) <= pids  # every file parsed once, in a worker process
    for fam, (src, _) in fleet.items():
        want_parts = _pandas_parts(fam, src)
        want = _concat(want_parts)
        out = got[fam]
        pd.testing.assert_frame_equal(out.reset_index(drop=True), want)
        rej = out.attrs["rejects"]
        assert isinstance(rej, Rejects) and len(rej) == 1
        assert rej == Rejects.concat([rejects_of(p) for p in want_parts])
        assert [_plain(a) for a in out.attrs["parts"]] == [_plain(p.attrs) for p in want_parts]
    # the pandas path of several files names the same rejected lines
    assert got["latency"].attrs["rejects"] == rejects_of(read_latency(fleet["latency"][0]))
    assert got["strace"].attrs["rejects"].rows()[0][2] == "this is not strace output"
    assert got["counters"].attrs["rejects"] == rejects_of(read_series(fleet["counters"][0]))
