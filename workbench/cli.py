"""The ``workbench`` command: ``report``, ``compare``, ``check``, ``diagnose``, ``list``, ``strace convert`` and ``lab <experiment>``."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from .errors import UsageError, WorkbenchError


def _notebooks_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    from .paths import project_root

    return project_root() / "notebooks"


def cmd_list(args: argparse.Namespace) -> int:
    from .report import discover, notebook_title, read_parameters, select

    for nb in select(discover(_notebooks_dir(args.notebooks)), args.names):
        print(f"{nb.stem} — {notebook_title(nb)}")
        for p in read_parameters(nb):
            print(f"    {p.name} = {p.default_source}  ({p.type_name})  {p.help}")
        print()
    return 0


def _load_checks(path: str | None) -> tuple[list, str | None]:
    """Rules of ``--check FILE``, else of ``./pyproject.toml [tool.workbench.checks]``, else none."""
    from .report.checks import pyproject_checks, read_checks

    if path:
        return read_checks(path), path
    found = pyproject_checks(".")
    return (read_checks(found), f"{found} [tool.workbench.checks]") if found else ([], None)


def _gate(results: list, checks: list, source: str | None, junit: str | None) -> int:
    """Evaluate checks, print the ones that did not pass, write JUnit and the step summary; exit code."""
    from .report.checks import checks_exit_code, evaluate_checks
    from .report.junit import report_junit
    from .report.summary import report_markdown, write_step_summary

    outcomes = evaluate_checks(checks, results) if checks else []
    for c in outcomes:
        if c.outcome != "passed":
            print(f"check {c.outcome.upper()}: {c.message}")
    if checks:
        n_pass = sum(c.outcome == "passed" for c in outcomes)
        print(f"checks ({source}): {n_pass} passed, {sum(c.outcome == 'failed' for c in outcomes)} failed, "
              f"{sum(c.outcome == 'error' for c in outcomes)} wrong (unknown notebook or finding)")
    if junit:
        print(f"junit: {report_junit(junit, results, outcomes)}")
    write_step_summary(report_markdown(results, outcomes))
    code = checks_exit_code(outcomes)
    if code == 2:
        print("workbench: a check names a notebook or finding this report does not have (exit 2)", file=sys.stderr)
        return 2
    return 1 if code or any(r.status != "ok" for r in results) else 0


def _skip_slow_format_checker() -> None:
    """Keep jsonschema from importing ``rfc3987_syntax`` in this process.

    jsonschema imports it, when installed (the Jupyter stack's format extras),
    to check the ``iri`` string format, and it compiles a grammar on import:
    about 1 s of a ``workbench report`` start, paid through nbformat.
    Notebook validation never checks that format. Only the command line's own
    process is affected, never the library or the kernels.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]


def cmd_report(args: argparse.Namespace) -> int:
    from .report import discover, run_report, select
    from .report.checks import validate_checks

    folder = _notebooks_dir(args.notebooks)
    notebooks = select(discover(folder), args.names)
    if not notebooks:
        print(f"workbench report: no notebooks (*.ipynb) in {folder}", file=sys.stderr)
        return 2
    checks, source = _load_checks(args.check)
    validate_checks(checks, [nb.stem for nb in notebooks])  # a wrong rule stops before anything runs
    overrides = {name: value for name, value in (args.param or [])}
    results = run_report(notebooks, overrides, out_dir=args.out, no_input=args.no_input,
                         jobs=args.jobs, timeout_s=args.timeout, warm=not args.cold_kernels)
    failed = [r for r in results if r.status != "ok"]
    print(f"report: {Path(args.out) / 'index.html'} ({len(results) - len(failed)} ok, {len(failed)} failed)")
    return _gate(results, checks, source, args.junit)


def cmd_check(args: argparse.Namespace) -> int:
    from .report.reading import read_report

    report = read_report(args.report, "REPORT")
    checks, source = _load_checks(args.check)
    if not checks:
        raise UsageError("no checks: pass --check FILE (TOML) or run where pyproject.toml has "
                             "[tool.workbench.checks]")
    results = list(report.notebooks.values())
    failed = [r for r in results if r.status != "ok"]
    print(f"report: {report.path} ({len(results) - len(failed)} ok, {len(failed)} failed)")
    return _gate(results, checks, source, args.junit)


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from .report.compare import compare_reports, format_comparison
    from .report.compare_page import write_compare_html
    from .report.junit import compare_junit
    from .report.summary import compare_markdown, write_step_summary

    comp = compare_reports(args.base, args.new)
    page = None
    if not args.no_html:
        page = write_compare_html(comp, args.html or comp.new.folder / "compare.html")
    if args.junit:
        compare_junit(args.junit, comp)
    write_step_summary(compare_markdown(comp))
    if args.json:
        print(json.dumps(comp.to_json(), indent=2, allow_nan=False))
    else:
        print(format_comparison(comp, max_rows=args.max_rows, html_path=page))
    return comp.exit_code


def cmd_diagnose(args: argparse.Namespace) -> int:
    import json

    from .diagnose import diagnose
    from .diagnose.output import summary_text, write_html

    diag = diagnose(args.paths)
    if args.json:
        print(json.dumps(diag.as_json(), indent=2, allow_nan=False))
    else:
        print(summary_text(diag))
    if args.out:
        page = write_html(diag, args.out)
        print(f"diagnose: {page}", file=sys.stderr if args.json else sys.stdout)
    return 0


def cmd_strace_convert(args: argparse.Namespace) -> int:
    from .readable import count, duration, number, size
    from .syscalls.convert import to_parquet

    if args.row_group_lines < 1:
        raise UsageError(f"--row-group-lines must be at least 1, got {args.row_group_lines}")
    trace = Path(args.trace)
    if not trace.is_file():
        from .errors import InputNotFoundError

        raise InputNotFoundError(f"no trace file {trace}")
    out = Path(args.output) if args.output else trace.with_name(trace.name + ".parquet")
    res = to_parquet(trace, out, row_group_lines=args.row_group_lines,
                     progress=False if args.quiet else None, pid_prefix=args.pid_prefix,
                     timestamps=args.timestamps)
    rate = res.lines / res.seconds if res.seconds > 0 else float("nan")
    print(f"{out}: {count(res.rows)} rows from {count(res.lines)} lines in {duration(res.seconds)} "
          f"({number(rate)} lines/s), {count(res.row_groups)} row group(s), {size(out.stat().st_size)}; "
          f"{count(res.rejects)} rejected lines and {count(res.messages)} messages in {res.side_path}")
    return 0


def _labs() -> dict[str, ModuleType]:
    """Experiment modules in ``workbench.lab`` that offer a command line (``add_parser``)."""
    from . import lab

    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(lab.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{lab.__name__}.{info.name}")
        if hasattr(mod, "add_parser"):
            found[info.name] = mod
    return found


def build_parser(with_labs: bool = True) -> argparse.ArgumentParser:
    """The command line; ``with_labs=False`` skips importing the experiment modules (slow imports)."""
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("report", help="run notebooks and write executed notebooks, HTML and an index")
    p.add_argument("names", nargs="*", help="notebooks to run (name, stem or prefix such as 04); default all")
    p.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="set a notebook parameter (typed by its default); repeatable")
    p.add_argument("--out", default="reports", help="output folder (default: reports)")
    p.add_argument("--no-input", action="store_true", help="render HTML without code cells")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="notebooks to run at once (default: the cores this process may use)")
    p.add_argument("--cold-kernels", action="store_true",
                   help="start a fresh kernel for every notebook instead of one warm kernel per job "
                        "(slower; the warm kernel is reset to an empty namespace before each notebook)")
    p.add_argument("--timeout", type=float, default=1800.0, help="per-cell timeout, seconds")
    p.add_argument("--notebooks", help="folder of notebooks (default: the project's notebooks/)")
    p.add_argument("--check", metavar="FILE",
                   help="gate the findings with the rules of this TOML file (default: [tool.workbench.checks] "
                        "of ./pyproject.toml, if any); a broken rule exits 1, a wrong one 2")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per notebook and per check")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="compare a report with a baseline: what moved beyond its noise",
                       description="Compare the findings of two reports. Exit 0: nothing regressed; "
                                   "1: something regressed; 2: usage error (missing folder, unreadable version).")
    p.add_argument("base", metavar="BASE", help="baseline report folder (or its report.json)")
    p.add_argument("new", metavar="NEW", help="new report folder (or its report.json)")
    p.add_argument("--json", action="store_true", help="print versioned JSON (every finding) instead of the table")
    p.add_argument("--html", metavar="FILE", help="write the HTML page here (default: NEW/compare.html)")
    p.add_argument("--no-html", action="store_true", help="write no HTML page")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per finding")
    p.add_argument("--max-rows", type=int, default=15, help="rows of the terminal table (default: 15)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("check", help="gate an existing report's findings with a check file")
    p.add_argument("report", metavar="REPORT", help="report folder (or its report.json)")
    p.add_argument("--check", metavar="FILE", help="TOML rules (default: [tool.workbench.checks] of ./pyproject.toml)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per notebook and per check")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("diagnose", help="read a folder of captures and rank the suspects, with the notebook for each",
                       description="Read every file under PATH (kind and format detected), run every detector "
                                   "that applies, rank what they found. Exit 0 whether or not something was found; "
                                   "2: usage error (a path that does not exist).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders of captures")
    p.add_argument("--out", metavar="DIR", help="also write DIR/diagnosis.html and DIR/diagnosis.json")
    p.add_argument("--json", action="store_true", help="print versioned JSON on stdout instead of the summary")
    p.set_defaults(func=cmd_diagnose)

    p = sub.add_parser("list", help="list notebooks with their parameters, defaults and help")
    p.add_argument("names", nargs="*")
    p.add_argument("--notebooks", help="folder of notebooks (default: the project's notebooks/)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("strace", help="strace traces: convert to Parquet")
    ssub = p.add_subparsers(dest="action", required=True)
    c = ssub.add_parser("convert", help="convert a trace of any size to Parquet in bounded memory",
                        description="Convert an strace output file to Parquet (and OUT's .side.parquet: rejected "
                                    "lines and messages); read_strace(OUT) loads it back, with columns= and "
                                    "filters=.")
    c.add_argument("trace", metavar="TRACE", help="strace output file (may be .gz, .bz2, .xz, .zst)")
    c.add_argument("-o", "--output", metavar="OUT.parquet", help="output file (default: TRACE.parquet)")
    c.add_argument("--row-group-lines", type=int, default=1 << 18,
                   help="input lines per chunk and row group (default: 262144)")
    c.add_argument("--pid-prefix", choices=["column", "none"], help="force the pid prefix (default: detected)")
    c.add_argument("--timestamps", choices=["none", "tod", "epoch", "relative"],
                   help="force the timestamp format (default: detected)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=cmd_strace_convert)

    p = sub.add_parser("lab", help="run a real experiment on this machine")
    labsub = p.add_subparsers(dest="experiment", required=True)
    for _name, mod in sorted(_labs().items() if with_labs else ()):
        mod.add_parser(labsub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    0: done; 1: a notebook of the report failed, a check was broken, or
    ``compare`` found a regression; 2: an error the workbench raises on purpose
    (an unknown notebook, parameter or checked finding, a missing input or report,
    a report version this workbench cannot read, an experiment that cannot run
    here), printed as one line on stderr.
    """
    argv = sys.argv[1:] if argv is None else argv
    _skip_slow_format_checker()
    args = build_parser(with_labs=bool(argv) and argv[0] == "lab").parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"workbench {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
