"""One detector per classic anomaly, each a thin layer over the library's own decision function.

Every detector takes the inventory (:func:`workbench.diagnose.inventory.inventory`) and
returns one :class:`Detection`: the verdict of the decision function it calls, mapped
yes → ``found``, no → ``not found``, inconclusive → ``inconclusive``; or
``not applicable`` with the input it would need. When several inputs qualify, each is
tested and the strongest result is reported (the others are listed in
``evidence["inputs_tested"]``).

Strength in [0, 1] (0 for ``not found`` and ``not applicable``) is documented per
detector; ``inconclusive`` results get at most half of what the same evidence would give
as ``found``.

========================== ========================================================= ====
detector                   decision function                                          nb
========================== ========================================================= ====
latency_quantum            :func:`workbench.stats.quantum_evidence` per condition,    01/02
                           :func:`~workbench.stats.quantum_across` over conditions
low_rate_tail              :func:`workbench.latency.analysis.tail_worse_at_low_rate`  02
timed_waits                :func:`workbench.syscalls.waits.timed_wait_peaks`,         01
                           :func:`~workbench.syscalls.waits.duration_peaks`,
                           :func:`~workbench.syscalls.waits.long_waits`
global_stall               :func:`workbench.models.stalls.global_stall_test`,         01
                           :func:`~workbench.models.stalls.stall_decision`
readahead_amplification    :func:`workbench.counters.analysis.amplification_decision` 03
event_loop_yields          :func:`workbench.models.yields.fit_duration`,              04
                           :func:`~workbench.models.yields.yield_cost_decision`
hot_actor                  :func:`workbench.models.scaling.cell_bottlenecks`,         05
                           :func:`~workbench.models.scaling.bottleneck_agreement`
========================== ========================================================= ====
"""
from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import WorkbenchError
from ..verdicts import Decision
from .inventory import InputFile

__all__ = ["DETECTORS", "NOTEBOOKS", "Detection", "event_loop_yields", "global_stall", "hot_actor",
           "latency_quantum", "low_rate_tail", "readahead_amplification", "report_command", "timed_waits"]

#: verdicts a detector can give
VERDICTS = ("found", "not found", "inconclusive", "not applicable")
_FROM_DECISION = {"yes": "found", "no": "not found", "inconclusive": "inconclusive"}

#: notebook stem of each report number
NOTEBOOKS = {"01": "01_quantized_latency", "02": "02_low_qps_nagle", "03": "03_readahead_amplification",
             "04": "04_event_loop_yields", "05": "05_actor_bottlenecks"}

#: the input parameters of each notebook that default to the bundled data: emptied in a command
#: unless the diagnosis fills them, so the report reads only the user's files
_INPUT_PARAMS = {
    "01": ("calls_path", "calls_after_path", "strace_path", "strace_after_path", "injections_path", "ping_path",
           "steps_path", "pauses_path", "interference_path", "overnight_path", "control_condition", "phases"),
    "02": (),
    "03": ("snapshots", "tsdb_csv", "nodes_csv", "demand_probe", "fetch_probe", "early_probe", "openat_probe",
           "cache_trap_snapshots", "cache_trap_demand", "probe_dir", "requests_counter", "instruments"),
    "04": ("published_path", "capture_path"),
    "05": ("iteration_times", "cores_times", "lines_of_code", "sim_runs", "sim_actors"),
}

#: least answered requests in a condition for its modes to be looked at
MIN_SAMPLES = 50


@dataclass
class Detection:
    """One detector's answer.

    ``verdict``: one of :data:`VERDICTS`; ``strength`` in [0, 1]; ``because``: one
    sentence from the decision function; ``evidence``: numbers with units in their keys;
    ``caveats``; ``inputs``: the files the answer rests on; ``notebook`` (stem) and
    ``command`` (``workbench report NN -p …`` on these files) for ``found`` and
    ``inconclusive``; ``needs``: for ``not applicable``, the input that would let it run.
    """

    detector: str
    verdict: str
    strength: float = 0.0
    because: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    caveats: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    notebook: str | None = None
    command: str | None = None
    needs: str = ""
    plot: dict[str, Any] = field(default_factory=dict, repr=False)

    def as_json(self) -> dict[str, Any]:
        """The JSON record (``suspects`` entry) of this detection."""
        out: dict[str, Any] = {"detector": self.detector, "verdict": self.verdict,
                               "strength": round(float(self.strength), 3), "because": self.because,
                               "evidence": _jsonable(self.evidence), "caveats": list(self.caveats),
                               "inputs": list(self.inputs), "notebook": self.notebook, "command": self.command}
        if self.needs:
            out["needs"] = self.needs
        return out


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float):
        return None if not math.isfinite(x) else round(x, 6)
    if isinstance(x, int | str | bool) or x is None:
        return x
    return str(x)


def report_command(nb: str, params: dict[str, str], out: str | None = None) -> str:
    """``workbench report NN -p name value … --out DIR``: ``params`` filled, every other input emptied."""
    full = {p: "" for p in _INPUT_PARAMS[nb]}
    full.update(params)
    parts = ["workbench", "report", nb]
    for k, v in full.items():
        parts += ["-p", k, shlex.quote(v) if v else "''"]
    parts += ["--out", shlex.quote(out or f"reports/diagnose-{nb}")]
    return " ".join(parts)


def _clip(x: float) -> float:
    return float(min(1.0, max(0.0, x))) if math.isfinite(x) else 0.0


def _from_decision(name: str, d: Decision, strength_found: float, inputs: list[str]) -> Detection:
    verdict = _FROM_DECISION[d.verdict]
    s = _clip(strength_found) if verdict == "found" else 0.5 * _clip(strength_found) if verdict == "inconclusive" \
        else 0.0
    because = d.because if not inputs or inputs[0] in d.because else f"{inputs[0]}: {d.because}"
    return Detection(name, verdict, s, because, dict(d.evidence), list(d.caveats), inputs)


def _best(results: list[Detection], name: str, needs: str) -> Detection:
    if not results:
        return Detection(name, "not applicable", needs=needs)
    order = {"found": 3, "inconclusive": 2, "not found": 1, "not applicable": 0}
    best = max(results, key=lambda r: (order[r.verdict], r.strength))
    if len(results) > 1:
        best.evidence["inputs_tested"] = {", ".join(r.inputs): r.verdict for r in results}
        if best.verdict == "not found":
            best.because = f"none of {len(results)} inputs tested; e.g. {best.because}"
    return best


def _error(name: str, inputs: list[str], exc: Exception) -> Detection:
    return Detection(name, "inconclusive", 0.0, f"the analysis could not run on this input: {exc}", {}, [], inputs)


# --------------------------------------------------------------------------- latency_quantum ----

_CONDITION_COLUMNS = ("phase", "run", "options", "condition", "rate_per_s")


def _samples(inputs: Sequence[InputFile]) -> list[InputFile]:
    return [f for f in inputs if f.kind == "latency" and f.extra.get("frame_kind") == "samples"]


def _conditions(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    keys = [c for c in _CONDITION_COLUMNS if c in frame.columns]
    ok = frame["ok"].astype(bool) if "ok" in frame.columns else pd.Series(True, index=frame.index)
    fr = frame[ok & np.isfinite(frame["latency_s"].to_numpy(dtype="float64"))]
    if not keys:
        return {"all": fr["latency_s"].to_numpy(dtype="float64")}
    out = {}
    for key, sub in fr.groupby(keys, sort=True, dropna=False):
        label = ", ".join(f"{k}={v}" for k, v in zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        out[label] = sub["latency_s"].to_numpy(dtype="float64")
    return out


def latency_quantum(inputs: Sequence[InputFile]) -> Detection:
    """Latency modes on a fixed step (delayed-ACK ~40 ms, 250/500/1000 ms timers), never the tool's resolution.

    Each latency file with raw samples is split into its conditions (columns phase,
    run, options, condition, rate_per_s where present); each condition with at least
    :data:`MIN_SAMPLES` answered requests goes through notebook 01's own decision:
    :func:`workbench.models.stalls.latency_modes` (clusters on a log axis) and
    :func:`~workbench.models.stalls.quantized_decision` given the sample, which judges the
    spacing with :func:`workbench.stats.quantum_evidence` (never within 8 steps of the
    output's resolution; narrow clusters only; a single step smaller than the fastest
    cluster is a split of the bulk). Conditions with a quantum are then checked against
    each other with :func:`workbench.stats.quantum_across`.
    found: a condition has a quantum; strength: its lattice score (0–1), times the share
    of the file's conditions with two or more clusters that show it (at least 1/2).
    inconclusive: clusters without a common spacing; strength half the best such score.
    A step between 30 and 250 ms on a file with several rates points to notebook 02,
    anything else to 01.
    """
    from ..models.stalls import latency_modes, quantized_decision
    from ..stats import quantum_across

    name = "latency_quantum"
    results = []
    for f in _samples(inputs):
        groups = {k: v * 1e3 for k, v in _conditions(f.frame).items() if v.size >= MIN_SAMPLES}
        if not groups:
            continue
        try:
            per = {}
            for k, v in groups.items():
                m = latency_modes(v / 1e3)
                per[k] = (m, quantized_decision(m, int(v.size), latency_s=v / 1e3))
        except (WorkbenchError, ValueError) as exc:
            results.append(_error(name, [f.path], exc))
            continue
        yes = {k: md for k, md in per.items() if md[1].verdict == "yes"}
        multi = [k for k, (m, _d) in per.items() if len(m.modes) >= 2]
        res = [float(d.evidence["resolution_ms"]) for _m, d in per.values() if "resolution_ms" in d.evidence]
        res_ms = min(res, default=math.nan)
        ev: dict[str, Any] = {"conditions": len(groups), "conditions_with_two_modes": len(multi),
                              "resolution_ms": res_ms, "samples": int(sum(v.size for v in groups.values()))}
        caveats: list[str] = []
        if yes:
            label, (m, d) = max(yes.items(), key=lambda kv: float(kv[1][1].evidence.get("score", 0.0)))
            quantum = float(d.evidence["quantum_ms"])
            score = float(d.evidence.get("score", 0.0))
            multiples = [int(k) for k in d.evidence.get("multiples", [])]
            ev.update({"quantum_ms": quantum, "condition": label, "score": score,
                       "modes_ms": [round(x.location, 3) for x in m.modes], "multiples": multiples,
                       "counts": [int(x.count) for x in m.modes], "conditions_with_quantum": len(yes)})
            if sum(1 for k in multiples if k >= 1) == 1:
                caveats.append("one step only (one cluster above the base): a spacing, not yet a lattice")
            if len(yes) >= 2:
                across = quantum_across({k: groups[k] for k in yes})
                ev["common_quantum_ms"] = across.quantum
                ev["common_verdict"] = across.verdict
                if across.verdict == "no":
                    caveats.append(f"the conditions' steps do not line up: {across.reason}")
            share = len(yes) / max(1, len(multi))
            strength = score * max(0.5, min(1.0, share))
            because = (f"{f.path}: {label}: {d.because} (lattice score {score:.2f}; output resolution "
                       f"{res_ms:.3g} ms); {len(yes)} of {len(groups)} condition(s) show a step")
            det = Detection(name, "found", _clip(strength), because, ev, caveats, [f.path])
            origin = min(x.location for x in m.modes)
            v = groups[label]
            det.plot = {"kind": "hist", "values": v[v <= np.percentile(v, 99.5)], "xlabel": f"latency (ms), {label}",
                        "logy": True,
                        "lines": [origin + k * quantum for k in range(0, max(multiples, default=1) + 1)]}
            rates = f.frame["rate_per_s"].nunique() if "rate_per_s" in f.frame.columns else 0
            if 30.0 <= quantum <= 250.0 and rates >= 2:
                det.notebook, det.command = NOTEBOOKS["02"], report_command("02", {"sweep_path": f.path})
            else:
                det.notebook = NOTEBOOKS["01"]
                run = {"calls_run": str(label.split("run=")[1].split(",")[0])} if "run=" in label else {}
                det.command = report_command("01", {"calls_path": f.path, **run})
            results.append(det)
            continue
        undecided = {k: md for k, md in per.items() if md[1].verdict == "inconclusive" and len(md[0].modes) >= 2}
        reasons = sorted({d.because for _m, d in per.values()})
        ev["reasons"] = reasons[:3]
        if undecided:
            label, (m, d) = max(undecided.items(), key=lambda kv: float(kv[1][1].evidence.get("score", 0.0)
                                                                         if math.isfinite(float(kv[1][1].evidence.get(
                                                                             "score", 0.0) or 0.0)) else 0.0))
            sc = float(d.evidence.get("score", 0.0) or 0.0)
            det = Detection(name, "inconclusive", 0.5 * _clip(0.5 * sc if math.isfinite(sc) else 0.0),
                            f"{f.path}: {label}: {d.because}", ev, caveats, [f.path])
            det.notebook = NOTEBOOKS["01"]
            run = {"calls_run": str(label.split("run=")[1].split(",")[0])} if "run=" in label else {}
            det.command = report_command("01", {"calls_path": f.path, **run})
            results.append(det)
            continue
        because = (f"{f.path}: none of {len(groups)} condition(s) has clusters on a common step "
                   f"({reasons[0] if reasons else 'no modes'})")
        results.append(Detection(name, "not found", 0.0, because, ev, caveats, [f.path]))
    return _best(results, name, f"latency samples (one row per request, at least {MIN_SAMPLES} answered in a "
                                "condition): hey/k6/jmeter/plain CSV …; histograms (hgrm, hlog) hide the modes")


# ---------------------------------------------------------------------------- low_rate_tail ----

def _rate_sources(inputs: Sequence[InputFile]) -> list[tuple[str, list[str]]]:
    """Files with a rate column, and folders holding two or more sample files (one run per file)."""
    from ..latency.analysis import RATE_COLUMNS

    out: list[tuple[str, list[str]]] = []
    by_dir: dict[str, list[str]] = {}
    for f in _samples(inputs):
        if any(c in f.frame.columns for c in RATE_COLUMNS):
            out.append((f.path, [f.path]))
        else:
            by_dir.setdefault(str(Path(f.path).parent), []).append(f.path)
    out += [(d, files) for d, files in sorted(by_dir.items()) if len(files) >= 2]
    return out


def _folder_is_runs(folder: str, files: list[str], inputs: Sequence[InputFile]) -> bool:
    """A folder is read as one sweep only when every file in it is a latency sample file."""
    mine = [f for f in inputs if str(Path(f.path).parent) == folder and f.kind != "unknown"]
    return all(f.path in files for f in mine)


def low_rate_tail(inputs: Sequence[InputFile]) -> Detection:
    """The tail (p99) is worse at the lowest offered rate than at the highest, where several rates are present.

    Each file with a rate column, and each folder of sample files (one run per file; rate
    from the file name or each file's achieved rate), is read with
    :func:`workbench.latency.analysis.read_runs` and tested with
    :func:`~workbench.latency.analysis.tail_worse_at_low_rate`. Lab captures with a
    ``phase`` column use the ``sweep`` phase. strength (found): 1 − 1 / (p99 ratio low ÷ high),
    e.g. 0.5 for a tail twice as long at the lowest rate.
    """
    from ..latency.analysis import read_runs, tail_worse_at_low_rate

    name = "low_rate_tail"
    results = []
    for where, files in _rate_sources(inputs):
        if len(files) > 1 and not _folder_is_runs(where, files, inputs):
            continue
        try:
            phase = None
            if len(files) == 1:
                fr = next(f.frame for f in inputs if f.path == files[0])
                if "phase" in fr.columns and (fr["phase"] == "sweep").any():
                    phase = "sweep"
            samples = read_runs(where, phase=phase)
            if samples["rate_per_s"].nunique() < 2:
                continue
            d = tail_worse_at_low_rate(samples)
        except (WorkbenchError, ValueError, KeyError) as exc:
            results.append(_error(name, [where], exc))
            continue
        ratio = float(d.evidence.get("ratio_low_to_high", math.nan))
        det = _from_decision(name, d, 1 - 1 / ratio if ratio > 1 else 0.0, [where])
        det.evidence["rate_from"] = str(samples.attrs.get("rate_from", ""))
        by_rate = d.evidence.get("p99_ms_by_rate", {})
        cis = d.evidence.get("p99_ci_ms_by_rate", {})
        det.plot = {"kind": "points", "x": [float(r) for r in by_rate], "y": list(by_rate.values()),
                    "lo": [cis[r][0] for r in by_rate], "hi": [cis[r][1] for r in by_rate], "logx": True,
                    "xlabel": "offered rate (requests/s)", "ylabel": "p99 latency (ms)"}
        if det.verdict != "not found":
            det.notebook, det.command = NOTEBOOKS["02"], report_command("02", {"sweep_path": where})
        results.append(det)
    return _best(results, name, "latency samples at two or more offered rates: a rate column (rate_per_s, rps, qps …) "
                                "or a folder with one file per rate (rate in the file name)")


# ------------------------------------------------------------------------------ timed_waits ----

def timed_waits(inputs: Sequence[InputFile], min_s: float = 0.2) -> Detection:
    """Sharp peaks of futex/poll/epoll/select durations at round values, idle loops told from the request path.

    Per strace with ``-T`` durations: :func:`workbench.syscalls.waits.duration_peaks`, then
    :func:`~workbench.syscalls.waits.timed_wait_peaks` (idle-wait peaks at ≥ ``min_s``), and
    :func:`~workbench.syscalls.waits.long_waits` for the role of the calls in each peak:
    ``loop`` (the thread waits again: an accept/poll loop idling, harmless) or ``one-off``
    (the thread went on to other work after the wait: on the request path).
    strength (found): 1 − the largest peak p-value, times the share of the peaks' calls that
    are one-off (at least 0.2: a peak made only of an idle loop's timer is a weak suspect).
    Kernel-work peaks at ≥ ``min_s`` are listed in the evidence.
    """
    from ..syscalls.waits import duration_peaks, long_waits, timed_wait_peaks

    name = "timed_waits"
    results = []
    for f in inputs:
        if f.kind != "strace" or not f.extra.get("timed_calls"):
            continue
        try:
            peaks = duration_peaks(f.frame)
            d = timed_wait_peaks(f.frame, peaks, min_s=min_s)
            waits = long_waits(f.frame, 0.9 * min_s)
        except (WorkbenchError, ValueError, KeyError) as exc:
            results.append(_error(name, [f.path], exc))
            continue
        idle = [p for p in peaks if p.wait_class == "idle" and p.location_s >= 0.9 * min_s]
        roles = {"loop": 0, "one-off": 0}
        for p in idle:
            sel = waits[(waits["syscall"] == p.syscall) & (waits["duration_ms"] >= 1e3 * p.low_s)
                        & (waits["duration_ms"] <= 1e3 * p.high_s)]
            for role, n in sel["role"].value_counts().items():
                roles[str(role)] = roles.get(str(role), 0) + int(n)
        timed = f.frame["duration_s"].to_numpy(dtype="float64")
        syscalls = {p.syscall for p in idle} or {"futex", "poll", "epoll_wait", "select"}
        sel_calls = f.frame["syscall"].astype(object).isin(syscalls).to_numpy()
        durations_ms = 1e3 * timed[sel_calls & np.isfinite(timed) & (timed >= 1e-4)]
        n_role = roles["loop"] + roles["one-off"]
        one_off = roles["one-off"] / n_role if n_role else 0.0
        p_max = max((p.p_value for p in idle), default=1.0)
        strength = (1 - p_max) * max(0.2, one_off)
        if d.verdict == "inconclusive" and d.evidence.get("one_off_waits_ms"):
            # long waits on the request path, too few for a peak: a weak suspect, weaker the fewer they are
            strength = 0.5 * min(1.0, len(d.evidence["one_off_waits_ms"]) / 5)
        det = _from_decision(name, d, strength, [f.path])
        det.evidence.update({"calls_in_peaks_loop": roles["loop"], "calls_in_peaks_one_off": roles["one-off"],
                             "kernel_peaks": [{"syscall": p.syscall, "location_ms": round(1e3 * p.location_s, 2),
                                               "count": p.count} for p in peaks
                                              if p.wait_class == "kernel" and p.location_s >= 0.9 * min_s]})
        det.plot = {"kind": "hist", "values": durations_ms, "logx": True,
                    "lines": [1e3 * p.location_s for p in idle], "xlabel": f"duration of {', '.join(sorted(syscalls))} (ms)"}
        if idle and one_off == 0:
            det.caveats.append("every call in the peaks is an idle loop re-arming its wait (accept/poll loop, "
                               "timer): a server waiting for work, not a stall on the request path")
        elif idle:
            det.caveats.append(f"{roles['one-off']} call(s) in the peaks were followed by other work: waits on the "
                               "request path")
        if det.verdict != "not found":
            det.notebook, det.command = NOTEBOOKS["01"], report_command("01", {"strace_path": f.path})
        results.append(det)
    return _best(results, name, "an strace with call durations: strace -f -T -ttt (-y helps) of the server")


# ----------------------------------------------------------------------------- global_stall ----

def global_stall(inputs: Sequence[InputFile]) -> Detection:
    """P(step is slow) grows with the step's duration: a stall hitting whatever runs, where per-step timings exist.

    Per steps table (request, step, duration_s): :func:`workbench.models.stalls.global_stall_test`
    on each ``condition`` (all rows when there is no such column) other than ``control``,
    with the ``control`` condition as its control, then
    :func:`~workbench.models.stalls.stall_decision`. strength (found): the lower bound of the
    correlation's CI (0 when negative); inconclusive: half the correlation.
    """
    from ..models.stalls import global_stall_test, stall_decision

    name = "global_stall"
    results = []
    for f in inputs:
        if f.format != "steps":
            continue
        fr = f.frame
        conds = sorted(str(c) for c in fr["condition"].dropna().unique()) if "condition" in fr.columns else [""]
        control = None
        try:
            if "control" in conds:
                control = global_stall_test(fr[fr["condition"] == "control"])
            tested = [c for c in conds if c != "control"] or conds  # a file of control runs alone is tested itself
            if tested == ["control"]:
                control = None
            for cond in tested:
                sub = fr[fr["condition"] == cond] if cond else fr
                test = global_stall_test(sub)
                d = stall_decision(test, control)
                strength = test.correlation_low if d.verdict == "yes" else test.correlation
                det = _from_decision(name, d, strength, [f.path])
                st = test.steps
                det.plot = {"kind": "points", "x": st["mean_ms"].tolist(), "y": st["p_slow"].tolist(),
                            "lo": st["p_slow_low"].tolist(), "hi": st["p_slow_high"].tolist(),
                            "fit_x": st["mean_ms"].tolist(),
                            "fit_y": (test.intercept + test.slope_per_ms * st["mean_ms"]).tolist(),
                            "xlabel": "step mean duration (ms)", "ylabel": "P(step is slow)"}
                det.evidence["slow_excess_ms"] = test.slow_excess_ms
                det.evidence["stall_rate_per_s"] = test.stall_rate_per_s
                if cond:
                    det.evidence["condition"] = cond
                if det.verdict != "not found":
                    params = {"steps_path": f.path, "steps_condition": cond,
                              "control_condition": "control" if control is not None else ""}
                    det.notebook, det.command = NOTEBOOKS["01"], report_command("01", params)
                results.append(det)
        except (WorkbenchError, ValueError, KeyError) as exc:
            results.append(_error(name, [f.path], exc))
    return _best(results, name, "per-step timings: a CSV with request, step, duration_s (one row per step of each "
                                "request)")


# ------------------------------------------------------------------ readahead_amplification ----

def _map_total(out: Any, counter: str) -> float:
    from ..counters.analysis import map_values

    maps = out.maps
    if "counter" not in maps.columns or counter not in set(maps["counter"]):
        return math.nan
    return float(map_values(maps, counter).sum())


#: the anchor a readahead probe capture is read against (notebook 03's ``probe_anchor`` default)
PROBE_ANCHOR = "pid_io:self/read_bytes"


def _probe_detection(name: str, f: InputFile) -> Detection:
    """Amplification per advice of a readahead probe capture; the advice that amplifies most is reported."""
    from ..counters.analysis import probe_amplification

    cap = f.frame
    page = int((cap.meta.get("environment") or {}).get("page_bytes") or 4096)
    per = probe_amplification(cap.reads, cap.files, cap.counters, cap.meta["phases"], PROBE_ANCHOR, page_bytes=page)
    if not per:
        raise WorkbenchError(f"{f.path}: the probe capture has no advice with reads")
    order = {"yes": 2, "inconclusive": 1, "no": 0}

    def ratio(d: Decision) -> float:
        r = float(d.evidence.get("ratio", math.nan))
        return r if math.isfinite(r) else -1.0

    advice, d = max(per.items(), key=lambda kv: (order[kv[1].verdict], ratio(kv[1])))
    r = float(d.evidence.get("ratio", math.nan))
    det = _from_decision(name, d, 1 - 1 / r if r > 1 else 0.0, [f.path])
    det.because = f"{f.path}: advice {advice}: {d.because}"
    det.evidence["advice"] = advice
    det.evidence["ratio_by_advice"] = {a: v.evidence.get("ratio") for a, v in per.items()}
    det.evidence["verdict_by_advice"] = {a: v.verdict for a, v in per.items()}
    det.plot = {"kind": "bars", "labels": [f"{a} {what}" for a in per for what in ("asked", "fetched")],
                "values": [float(v.evidence[key]) / 2**10 for v in per.values()
                           for key in ("demanded_bytes", "fetched_bytes")], "ylabel": "KiB"}
    if det.verdict != "not found":
        det.notebook = NOTEBOOKS["03"]
        det.command = report_command("03", {"probe_dir": f.path, "probe_anchor": PROBE_ANCHOR})
    return det


def _series_detection(name: str, f: InputFile) -> Detection | None:
    """Amplification from snapshots alone: a process's ``/proc/<pid>/io`` (asked) against the block
    devices' ``/proc/diskstats`` reads (fetched); None when the snapshots hold no such pair."""
    from ..counters.analysis import counter_hosts, parse_counter, series_amplification

    fr = f.frame
    if fr is None or not {"source", "item", "counter", "host", "timestamp"} <= set(fr.columns):
        return None
    pids = sorted({str(i) for i in fr.loc[(fr["source"] == "pid_io") & (fr["counter"] == "rchar"), "item"]})
    disks = sorted({str(i) for i in fr.loc[(fr["source"] == "diskstats") & (fr["counter"] == "read_bytes"), "item"]})
    if len(pids) != 1 or not disks:
        return None
    pid = pids[0]
    demand = parse_counter(f"pid_io:{pid}/rchar")
    hosts = counter_hosts(fr, demand)
    if len(hosts) != 1:
        return None
    host = hosts[0]
    per: dict[str, Decision] = {}
    for dev in disks:
        spec = parse_counter(f"diskstats:{dev}/read_bytes")
        if host not in counter_hosts(fr, spec):
            continue
        d = series_amplification(fr, spec, demand, f"pid_io:{pid}/syscr", host=host)
        if float(d.evidence.get("fetched_bytes", 0.0)) > 0:
            per[dev] = d
    if not per:
        return None
    verdicts = {d.verdict for d in per.values()}
    dev, d = min(per.items(), key=lambda kv: float(kv[1].evidence["ratio"]))
    r = float(d.evidence["ratio"])
    det = _from_decision(name, d, 1 - 1 / r if r > 1 else 0.0, [f.path])
    det.evidence["ratio_by_device"] = {k: v.evidence["ratio"] for k, v in per.items()}
    if len(verdicts) > 1:
        det.verdict, det.strength = "inconclusive", 0.5 * det.strength
        det.because = (f"{f.path}: no anchor declared and the devices that read during the window disagree: "
                       + ", ".join(f"{k} {v.verdict} ({float(v.evidence['ratio']):.3g}×)" for k, v in per.items())
                       + "; name the device under the reads as notebook 03's anchor")
    elif len(per) > 1:
        det.caveats.append(f"no anchor declared: {len(per)} devices read during the window "
                           f"({', '.join(per)}); the smallest ratio, {dev}'s, is reported — declare the device "
                           "under the reads as the anchor")
    det.plot = {"kind": "bars", "labels": ["asked", *[f"{k} read" for k in per]],
                "values": [float(d.evidence["demanded_bytes"]) / 2**10,
                           *[float(v.evidence["fetched_bytes"]) / 2**10 for v in per.values()]], "ylabel": "KiB"}
    if det.verdict != "not found":
        det.notebook = NOTEBOOKS["03"]
        det.command = report_command("03", {"snapshots": f.path, "anchor": f"diskstats:{dev}/read_bytes",
                                            "demand_counter": f"pid_io:{pid}/rchar",
                                            "demand_ops_counter": f"pid_io:{pid}/syscr", "profiled_host": host})
    return det


def readahead_amplification(inputs: Sequence[InputFile]) -> Detection:
    """Bytes fetched against bytes asked, where both exist: bpftrace maps, a readahead probe, or snapshots.

    Three kinds of input, each tested with :func:`workbench.counters.analysis.amplification_decision`
    (found: fetched ÷ asked ≥ 2), as notebook 03 takes them:

    - bpftrace maps ``@ra_bytes`` (fetch) and ``@demand_bytes`` (demand), paired within a folder
      (several of each are summed);
    - a readahead probe capture (``workbench lab readahead``): per advice through
      :func:`~workbench.counters.analysis.probe_amplification` with the anchor
      :data:`PROBE_ANCHOR`; the advice that amplifies most is reported;
    - counter snapshots (a ``<host>/<ts>/<path>`` tree, marker logs) holding one process's
      ``/proc/<pid>/io`` and ``/proc/diskstats``: :func:`~workbench.counters.analysis.series_amplification`
      with the pid's ``rchar`` as demand against each device that read in the window; the devices
      must agree (inconclusive otherwise: the anchor is then the user's to declare), the smallest
      ratio is reported.

    strength (found): 1 − 1 / ratio (0.5 at 2×, 0.9 at 10×).
    """
    from ..counters.analysis import amplification_decision

    name = "readahead_amplification"
    by_dir: dict[str, dict[str, list[InputFile]]] = {}
    results = []
    for f in inputs:
        if f.format == "readahead_probe":
            try:
                results.append(_probe_detection(name, f))
            except (WorkbenchError, ValueError, KeyError, TypeError) as exc:
                results.append(_error(name, [f.path], exc))
            continue
        if f.format in ("snapshot_tree", "snapshots"):
            try:
                det = _series_detection(name, f)
            except (WorkbenchError, ValueError, KeyError, TypeError) as exc:
                det = _error(name, [f.path], exc)
            if det is not None:
                results.append(det)
            continue
        if f.format != "bpftrace":
            continue
        maps = set(f.extra.get("maps", []))
        slot = by_dir.setdefault(str(Path(f.path).parent), {"demand": [], "fetch": []})
        if "@demand_bytes" in maps:
            slot["demand"].append(f)
        if "@ra_bytes" in maps and "@demand_bytes" not in maps:
            slot["fetch"].append(f)
    for _folder, slot in sorted(by_dir.items()):
        if not slot["demand"] or not slot["fetch"]:
            continue
        # the fetch side: the map at the final readahead window when several profilers are present
        fetch = sorted(slot["fetch"], key=lambda f: ("unbounded" not in f.path, f.path))[0]
        demand = slot["demand"][0]
        paths = [demand.path, fetch.path]
        try:
            fetched = _map_total(fetch.frame, "@ra_bytes")
            asked = _map_total(demand.frame, "@demand_bytes")
            reads = _map_total(demand.frame, "@reads")
            d = amplification_decision(fetched, asked, reads, anchor=fetch.path, demand=demand.path)
        except (WorkbenchError, ValueError, KeyError) as exc:
            results.append(_error(name, paths, exc))
            continue
        ratio = float(d.evidence.get("ratio", math.nan))
        det = _from_decision(name, d, 1 - 1 / ratio if ratio > 1 else 0.0, paths)
        det.plot = {"kind": "bars", "labels": ["asked", "fetched"], "values": [asked / 2**20, fetched / 2**20],
                    "ylabel": "MiB"}
        if len(slot["fetch"]) > 1:
            det.caveats.append(f"{len(slot['fetch'])} fetch profilers in this folder; {fetch.path} was used "
                               "(the others may count a different readahead stage)")
        if det.verdict != "not found":
            det.notebook = NOTEBOOKS["03"]
            det.command = report_command("03", {"demand_probe": demand.path, "fetch_probe": fetch.path})
        results.append(det)
    return _best(results, name, "bytes fetched and bytes asked over the same window: bpftrace maps @ra_bytes (fetch) "
                                "and @demand_bytes (demand) in one folder, a readahead probe capture (workbench lab "
                                "readahead --out DIR), or snapshots of one process's /proc/<pid>/io beside "
                                "/proc/diskstats")


# ---------------------------------------------------------------------------- event_loop_yields ----

def event_loop_yields(inputs: Sequence[InputFile]) -> Detection:
    """Duration grows as yields × loop lag (each yield costs one loop pass), where such a table exists.

    Published tables (event_loop_ms, duration_ms, yields) and lab captures (their
    ``yielding`` rows, lag ``lag_ms_measured``) are fitted with
    :func:`workbench.models.yields.fit_duration`, decided by
    :func:`~workbench.models.yields.yield_cost_decision`: found when each yield costs one loop
    pass or more (the CI lies within 1 ± margin, or wholly above), not found when it lies
    wholly below (yields cost less than a pass: something else sets the duration).
    strength (found): the fit's R².
    """
    from ..models.yields import fit_duration, yield_cost_decision

    name = "event_loop_yields"
    results = []
    for f in inputs:
        if f.format not in ("yields_published", "yields_capture"):
            continue
        try:
            if f.format == "yields_capture":
                sub = f.frame[f.frame["mode"] == "yielding"]
                fit = fit_duration(sub, lag_col="lag_ms_measured")
                param = "capture_path"
            else:
                fit = fit_duration(f.frame)
                param = "published_path"
            d = yield_cost_decision(fit, what=f.path)
        except (WorkbenchError, ValueError, KeyError, np.linalg.LinAlgError) as exc:
            results.append(_error(name, [f.path], exc))
            continue
        det = _from_decision(name, d, fit.r2, [f.path])
        det.plot = {"kind": "points", "x": fit.x_ms.tolist(), "y": fit.y_ms.tolist(), "fit_x": fit.x_ms.tolist(),
                    "fit_y": fit.fitted_ms.tolist(), "xlabel": "yields × loop lag (ms)", "ylabel": "duration (ms)"}
        lo, hi = float(d.evidence["ci_lo"]), float(d.evidence["ci_hi"])
        margin = float(d.evidence["margin"])
        if d.verdict == "no" and lo > 1 + margin:
            # more than one pass per yield: duration is driven by yields × loop lag all the more
            det.verdict, det.strength = "found", _clip(fit.r2)
            det.caveats.append(f"each yield costs {fit.slope:.2f} loop passes (95 % CI {lo:.2f} to {hi:.2f}), more "
                               "than one: duration still grows as yields × loop lag")
        if det.verdict != "not found":
            det.notebook, det.command = NOTEBOOKS["04"], report_command("04", {param: f.path})
        results.append(det)
    return _best(results, name, "a table of saves: event_loop_ms, duration_ms, yields (or a workbench lab yields "
                                "capture)")


# ------------------------------------------------------------------------------------ hot_actor ----

def hot_actor(inputs: Sequence[InputFile]) -> Detection:
    """One actor kind's busy time dominates every cell, where per-actor metrics exist.

    Per actor-metrics table (iteration, banks, clients_per_bank, repeat, actor, kind,
    busy_s): :func:`workbench.models.scaling.cell_bottlenecks` then
    :func:`~workbench.models.scaling.bottleneck_agreement` for each iteration; the
    iteration whose bottleneck is clearest is reported. The evidence says whether the
    bottleneck's lead grows with load (Spearman ρ of dominance against transfers).
    strength (found): the share of the iteration's cells settled on that kind.
    """
    from scipy import stats as sps

    from ..models.scaling import bottleneck_agreement, cell_bottlenecks

    name = "hot_actor"
    results = []
    for f in inputs:
        if f.format != "actor_metrics":
            continue
        try:
            cells = cell_bottlenecks(f.frame)
            for it in sorted(cells["iteration"].unique()):
                d = bottleneck_agreement(cells, int(it))
                g = cells[cells["iteration"] == it]
                kinds = g["kind"].value_counts()
                top = str(kinds.index[0])
                share = float(((g["kind"] == top) & g["settled"]).mean())
                det = _from_decision(name, d, share, [f.path])
                det.evidence.update({"iteration": int(it), "kind": top, "cells": len(g),
                                     "cells_settled": int(g["settled"].sum()),
                                     "median_dominance": float(g["dominance"].replace(np.inf, np.nan).median())})
                det.plot = {"kind": "points", "x": g["transfers"].tolist(),
                            "y": g["dominance"].replace(np.inf, np.nan).tolist(), "logx": True,
                            "xlabel": f"transfers per run (iteration {int(it)})",
                            "ylabel": "busiest ÷ next kind", "title": f"{top} lead"}
                if len(g) >= 3 and g["transfers"].nunique() > 1:
                    dom = g["dominance"].replace(np.inf, np.nan)
                    rho = sps.spearmanr(g["transfers"], dom, nan_policy="omit").statistic
                    det.evidence["dominance_vs_load_spearman"] = float(rho)
                if det.verdict != "not found":
                    runs = Path(f.path).parent / "runs.csv"
                    params = {"sim_actors": f.path, "sim_runs": str(runs) if runs.exists() else ""}
                    det.notebook, det.command = NOTEBOOKS["05"], report_command("05", params)
                results.append(det)
        except (WorkbenchError, ValueError, KeyError) as exc:
            results.append(_error(name, [f.path], exc))
    return _best(results, name, "per-actor metrics: iteration, banks, clients_per_bank, repeat, actor, kind, busy_s "
                                "(workbench lab actors' actors.csv)")


#: every detector, in the order they run
DETECTORS: dict[str, Callable[[Sequence[InputFile]], Detection]] = {
    "latency_quantum": latency_quantum,
    "low_rate_tail": low_rate_tail,
    "timed_waits": timed_waits,
    "global_stall": global_stall,
    "readahead_amplification": readahead_amplification,
    "event_loop_yields": event_loop_yields,
    "hot_actor": hot_actor,
}
