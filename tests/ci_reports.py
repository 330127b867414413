"""Writing report folders by hand (report.json + one page per notebook) for comparison and gate tests."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def finding(name: str, value: Any, **extra: Any) -> dict[str, Any]:
    """A report.json finding payload: name, value, unit and explain, plus any uncertainty keys given."""
    return {"name": name, "value": value, "unit": extra.pop("unit", None), "explain": extra.pop("explain", None),
            **extra}


def write_report(folder: Path, notebooks: dict[str, list[dict[str, Any]] | tuple[str, list[dict[str, Any]]]],
                 version: int = 1) -> Path:
    """A report folder as ``workbench report`` writes it: ``report.json`` and ``<notebook>.html`` pages.

    ``notebooks`` maps a name to its findings, or to ``(status, findings)``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, spec in notebooks.items():
        status, found = spec if isinstance(spec, tuple) else ("ok", spec)
        page = folder / f"{name}.html"
        page.write_text(f"<html><body>{name}</body></html>")
        error = None if status == "ok" else {"cell_index": 3, "execution_count": 2, "ename": "RuntimeError",
                                             "evalue": "boom", "traceback": "\x1b[31mRuntimeError\x1b[0m: boom"}
        entries.append({"name": name, "title": name.replace("_", " "), "status": status, "seconds": 1.5,
                        "parameters": {}, "findings": {f["name"]: f for f in found}, "error": error,
                        "ipynb": str(folder / f"{name}.ipynb"), "html": f"/elsewhere/{name}.html"})
    (folder / "report.json").write_text(json.dumps({"version": version, "notebooks": entries}, indent=2))
    return folder
