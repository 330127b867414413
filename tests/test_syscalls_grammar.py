"""The strace grammar module: one source of the codes and patterns both Python scanners and the C scanner use."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from workbench.syscalls import _grammar as g

PKG = Path(g.__file__).parent


def _c_enum(source: str, first: str) -> list[str]:
    m = re.search(r"enum \{ (" + first + r"[^}]*)\};", source)
    assert m is not None, first
    return [x.strip() for x in m.group(1).split(",") if x.strip()]


def test_c_scanner_mirrors_the_grammar_codes() -> None:
    c = (PKG / "_native.c").read_text()
    for first in ("K_CALL", "TS_NONE", "PID_NONE"):
        for code, name in enumerate(_c_enum(c, first)):
            assert getattr(g, name) == code, name
    assert len(_c_enum(c, "K_CALL")) == len(g.KINDS)
    defines = dict(re.findall(r"#define (NA|DAY_NS|HALF_DAY_NS) (\S+)", c))
    assert defines["NA"] == "INT64_MIN" and g.NA == -(2**63)
    assert int(defines["DAY_NS"].rstrip("L")) == g.DAY_NS
    assert int(defines["HALF_DAY_NS"].rstrip("L")) == g.HALF_DAY_NS


def _module_imports(path: Path) -> tuple[set[str], set[str]]:
    """Relative modules imported at module level, and inside functions."""
    tree = ast.parse(path.read_text())
    top = {n.module or "" for n in tree.body if isinstance(n, ast.ImportFrom) and n.level}
    top |= {a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.level and not n.module
            for a in n.names}
    inner: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(node):
                if isinstance(n, ast.ImportFrom) and n.level:
                    inner.add(n.module or "")
                    inner |= {a.name for a in n.names} if not n.module else set()
    return top, inner


def test_no_import_cycle_between_the_scanners() -> None:
    ref_top, ref_inner = _module_imports(PKG / "_reference.py")
    vec_top, vec_inner = _module_imports(PKG / "_vector.py")
    gram_top, gram_inner = _module_imports(PKG / "_grammar.py")
    assert "_grammar" in ref_top and "_grammar" in vec_top
    assert not ({"_reference", "_vector"} & (gram_top | gram_inner))
    assert not ({"_reference"} & (vec_top | vec_inner))  # the tokenizer never reaches back
    assert "_vector" not in ref_top  # the reference takes it only where a block goes column by column


@pytest.mark.parametrize("pid_mode", [g.PID_NONE, g.PID_COLUMN, g.PID_FIXED])
@pytest.mark.parametrize("ts_mode", [g.TS_NONE, g.TS_TOD, g.TS_EPOCH])
def test_re2_patterns_take_the_lines_the_python_patterns_take(pid_mode: int, ts_mode: int) -> None:
    head = {g.PID_COLUMN: "1234  "}.get(pid_mode, "") + {g.TS_TOD: "10:00:01.000002 ",
                                                         g.TS_EPOCH: "1796013511.984668 "}.get(ts_mode, "")
    lines = [head + 'read(3</p>, "x) = 1", 9) = 1 <0.000010>',
             head + "futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>",
             head + "<... futex resumed>) = 0 <0.200000>",
             head + "<... futex resumed> ) = 0",  # old spacing: left to the sequential rules
             head + "--- SIGCHLD {si_signo=SIGCHLD} ---",
             head + "+++ exited with 0 +++"]
    complete, unfinished, resumed = g.fast_patterns(pid_mode, ts_mode)
    want = [any(p.match(s) for p in (complete, unfinished, resumed)) for s in lines]
    assert want == [True, True, True, False, False, False]
    pats = g.vector_patterns(pid_mode, ts_mode)
    got = pc.match_substring_regex(pa.array(lines), pats.any).to_pylist()
    assert got == want
    res = pc.match_substring_regex(pa.array(lines), pats.resumed_head).to_pylist()
    assert res == [False, False, True, True, False, False]


def test_return_values() -> None:
    assert [g.parse_retval(t) for t in ("?", "0x10", "-1", "022", "0", "17")] == [g.NA, 16, -1, 18, 0, 17]
    assert g.parse_retval("0xffffffffffffffff") == -1 and g.wrap_int64(2**63) == -(2**63)
