"""The asyncio yields experiment: the save itself, its rollback, the sweep, and what it shows."""
from __future__ import annotations

import asyncio
import glob
import os
import tempfile
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.errors import ParseError, UsageError
from workbench.lab.yields import (
    CAPTURE_SCHEMA,
    make_config,
    measure_save,
    read_capture,
    run_sweep,
    save_blocking,
    save_offloaded,
    save_yielding,
)
from workbench.models.yields import (
    fit_lab,
    lab_lag_column,
    offload_comparison,
    offload_decision,
    passes_per_yield_decision,
    yield_cost_decision,
)
from workbench.paths import project_root

CAPTURE = project_root() / "data" / "04_event_loop_yields" / "lab_capture.csv"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _leftovers() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "workbench-yields-*")))


def test_make_config_sizes_and_nesting() -> None:
    cfg = make_config(8, section_bytes=1000)
    assert len(cfg) == 8 and all(len(v) >= 1000 for v in cfg.values())
    assert sum("/" in k for k in cfg) == 2  # every fourth section is nested


def test_blocking_save_writes_the_tree_and_renames_into_place(tmp_path: Path) -> None:
    cfg = make_config(5, 300)
    st = save_blocking(cfg, tmp_path / "config")
    assert _tree(tmp_path / "config") == cfg
    assert [p.name for p in tmp_path.iterdir()] == ["config"]  # the random temp name is gone
    assert st.written_bytes == sum(map(len, cfg.values()))


def test_save_rolls_back_on_error(tmp_path: Path) -> None:
    # "a" is a file, so "a/b.yml" cannot get its directory: the save fails and removes its temp tree
    cfg = {"a": b"x", "a/b.yml": b"y"}
    with pytest.raises(NotADirectoryError):
        save_blocking(cfg, tmp_path / "config")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(NotADirectoryError):
        asyncio.run(save_yielding(cfg, tmp_path / "config"))
    assert list(tmp_path.iterdir()) == []


def test_target_exists_is_an_error_and_rolls_back(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "old.yml").write_text("keep")
    with pytest.raises(OSError):
        save_blocking(make_config(2, 100), tmp_path / "config")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config"]
    assert (tmp_path / "config" / "old.yml").read_text() == "keep"


def test_yielding_save_yields_once_per_file_call(tmp_path: Path) -> None:
    cfg = make_config(4, 200)
    yields, st = asyncio.run(save_yielding(cfg, tmp_path / "c1"))
    assert yields == st.calls
    # per section at least: a stat per path component, open, write, close
    depth = len(Path(os.path.abspath(tmp_path)).parts)
    assert yields >= 4 * (depth + 3)
    assert _tree(tmp_path / "c1") == cfg
    n, st2 = asyncio.run(save_offloaded(cfg, tmp_path / "c2"))
    assert n == 1 and st2.calls == st.calls and _tree(tmp_path / "c2") == cfg


def _open_fds() -> int:
    d = "/proc/self/fd"
    return len(os.listdir(d)) if os.path.isdir(d) else 0


def test_cancelled_yielding_save_rolls_back_at_any_point(tmp_path: Path) -> None:
    cfg = make_config(6, 200)

    async def cancel_after(k: int, target: Path) -> None:
        task = asyncio.create_task(save_yielding(cfg, target))
        for _ in range(k):
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    fds = _open_fds()
    ks = range(1, 80, 3)  # cancel during mktree, open, write, close of every section, and after the rename
    for k in ks:
        asyncio.run(cancel_after(k, tmp_path / f"config{k}"))
    # all or nothing: a cancelled save leaves no partial tree and no temp directory behind
    left = sorted(p.name for p in tmp_path.iterdir())
    assert all(name.startswith("config") and "." not in name for name in left)
    assert all(_tree(tmp_path / name) == cfg for name in left)
    assert 0 < len(left) < len(ks)  # some saves were interrupted, some had finished
    assert _open_fds() == fds


def test_measure_save_counts_passes_and_measures_lag(tmp_path: Path) -> None:
    m = asyncio.run(measure_save("yielding", make_config(4, 200), tmp_path / "cfg", hog_ms=3.0))
    assert abs(m.passes - m.yields) <= 2  # one loop pass per yield
    assert m.lag_ms_measured >= 2.9  # a pass can't be shorter than the hog's spin
    # the lag the save got from the others: still at least the spin, at most the whole pass
    assert 2.9 <= m.lag_ms_others <= m.lag_ms_during
    assert m.duration_ms >= 0.9 * m.yields * 3.0
    with pytest.raises(UsageError, match="mode must be one of"):
        asyncio.run(measure_save("sideways", make_config(1), tmp_path / "x", hog_ms=0.0))


def test_cli_writes_a_capture_and_leaves_no_temp_files(tmp_path: Path) -> None:
    before = _leftovers()
    out = tmp_path / "cap.csv"
    rc = main(["lab", "yields", "--out", str(out), "--sections", "2", "3", "--hog-ms", "0", "1",
               "--repeats", "1", "--no-progress"])
    assert rc == 0
    cap = read_capture(out)
    assert len(cap) == 2 * 2 * 2 and len(cap.attrs["rejects"]) == 0
    assert out.read_text().startswith("# made by: workbench lab yields")
    assert _leftovers() == before


def test_bundled_capture_loads() -> None:
    cap = read_capture(CAPTURE)
    assert len(cap.attrs["rejects"]) == 0 and cap.attrs["schema"] == CAPTURE_SCHEMA.name
    assert set(cap["mode"]) == {"yielding", "offloaded"}
    assert (cap.loc[cap["mode"] == "offloaded", "yields"] == 1).all()


def test_capture_rejects_unknown_mode_and_negative_values() -> None:
    head = CAPTURE.read_text().splitlines()
    header = next(line for line in head if not line.startswith("#"))
    good = next(line for line in head if line.startswith("yielding"))
    fields = good.split(",")
    negative = ",".join([*fields[:-2], "-1.0", fields[-1]])  # fs_ms < 0
    text = "\n".join([header, good, good.replace("yielding", "sideways", 1), negative]) + "\n"
    cap = read_capture(text)
    rej = cap.attrs["rejects"].frame()
    assert len(cap) == 1 and rej["line"].tolist() == [3, 4]
    assert "mode" in rej["reason"].iloc[0] and "fs_ms" in rej["reason"].iloc[1]
    with pytest.raises(ParseError) as exc:
        read_capture(text, strict=True)
    assert exc.value.line == 3 and "sideways" in str(exc.value)


def test_sweep_rejects_bad_plans_naming_the_parameter() -> None:
    with pytest.raises(UsageError, match="unknown mode 'sideways' in modes"):
        run_sweep(modes=("sideways",), progress=False)
    with pytest.raises(UsageError, match="n_hogs=0"):
        run_sweep(n_hogs=0, progress=False)
    with pytest.raises(UsageError, match="sections must be >= 1"):
        make_config(0)


def test_sweep_stops_at_its_time_budget() -> None:
    with pytest.warns(UserWarning, match="max_seconds"):
        frame = run_sweep(sections=(2,), hog_ms=(0.0,), repeats=2, max_seconds=0.0, progress=False)
    assert frame.attrs["truncated"] and len(frame) == 0


def test_bundled_capture_shows_the_effect_and_the_fix() -> None:
    cap = read_capture(CAPTURE)
    fit = fit_lab(cap)
    assert 0.8 <= fit.slope <= 1.3 and fit.r2 > 0.98
    y = cap[cap["mode"] == "yielding"]
    assert ((y["passes"] - y["yields"]).abs() <= 2).all()
    c = offload_comparison(cap)
    assert c.spread_ratio < 0.1  # offloaded durations barely move across the sweep
    assert abs(c.slope_ratio) < 0.05  # and do not grow with sections × lag
    assert c.speedup > 10
    assert 1.5 <= c.offloaded_passes <= 4


@pytest.mark.slow
def test_live_sweep_reproduces_yields_times_lag() -> None:
    before = _leftovers()
    cap = run_sweep(sections=(2, 8), hog_ms=(0.0, 4.0, 8.0), repeats=1, max_seconds=120, progress=False)
    assert len(cap) == 2 * 3 * 2 and not cap.attrs["truncated"]
    # judged on what was measured, with its interval (the machine may be busy): the count of
    # passes per yield is direct; the fit against the lag each save got never denies one pass
    assert lab_lag_column(cap) == "lag_ms_others"
    assert passes_per_yield_decision(cap).verdict == "yes"
    assert yield_cost_decision(fit_lab(cap)).verdict in ("yes", "inconclusive")
    assert offload_decision(offload_comparison(cap)).verdict in ("yes", "inconclusive")
    assert _leftovers() == before
