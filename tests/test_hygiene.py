"""Committed notebooks are clean: no outputs, kernelspec and language, documented parameters."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from workbench.report.notebooks import hygiene_problems, read_parameters

from .conftest import NOTEBOOKS, make_notebook

COMMITTED = sorted(NOTEBOOKS.glob("*.ipynb"))
#: the notebook that diagnoses a folder and points to the investigations (01 …); first in the report
TRIAGE = "00_triage"


def test_there_are_notebooks() -> None:
    assert COMMITTED, "no notebooks under notebooks/"


def test_the_triage_notebook_comes_first() -> None:
    from workbench.report.runner import discover, select

    assert discover(NOTEBOOKS)[0].stem == TRIAGE  # the report runs it first and the index lists it first
    assert [p.stem for p in select(discover(NOTEBOOKS), ["00"])] == [TRIAGE]


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_committed_notebook_is_clean(path: Path) -> None:
    assert hygiene_problems(path) == []


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_committed_notebook_has_live_switch_and_name(path: Path) -> None:
    import re

    assert re.fullmatch(r"\d\d_[a-z0-9_]+", path.stem), "notebooks are named NN_topic.ipynb"
    names = {p.name for p in read_parameters(path)}
    if path.stem == TRIAGE:
        assert "folder" in names, "the triage notebook diagnoses a folder of captures (folder parameter)"
        return  # it only reads captures: there is no experiment to rerun
    assert "live" in names, "every investigation can rerun its experiment live (live parameter)"


def _clean(tmp_path: Path) -> Path:
    return make_notebook(tmp_path / "01_x.ipynb", "a = 1  # the a\nb = 'x'  # the b", ["print(a)"])


def test_checker_accepts_a_clean_notebook(tmp_path: Path) -> None:
    assert hygiene_problems(_clean(tmp_path)) == []


def test_checker_flags_outputs_and_counts(tmp_path: Path) -> None:
    path = _clean(tmp_path)
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nb.cells[2].execution_count = 3
    nbformat.write(nb, str(path))
    problems = hygiene_problems(path)
    assert any("outputs" in p for p in problems) and any("execution count" in p for p in problems)


def test_checker_flags_missing_metadata(tmp_path: Path) -> None:
    path = _clean(tmp_path)
    nb = nbformat.read(str(path), as_version=4)
    nb.metadata = {}
    nbformat.write(nb, str(path))
    problems = hygiene_problems(path)
    assert any("kernelspec" in p for p in problems) and any("language" in p for p in problems)


def test_checker_flags_missing_or_undocumented_parameters(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "01_y.ipynb", "a = 1  # documented\nb = 2", ["print(a)"])
    assert hygiene_problems(path) == ["parameter 'b' has no help comment"]
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[1].metadata["tags"] = []
    nbformat.write(nb, str(path))
    assert "no code cell tagged 'parameters'" in hygiene_problems(path)


def test_parameters_help_from_comment_above(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "01_z.ipynb", "# how many instances\nn = 200\nlive = False  # rerun", ["1"])
    params = read_parameters(path)
    assert [(p.name, p.default, p.help) for p in params] == [("n", 200, "how many instances"), ("live", False, "rerun")]


def test_checker_names_the_line_of_a_statement_in_the_parameters_cell(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "01_s.ipynb", "a = 1  # the a\nimport os", ["print(a)"])
    assert hygiene_problems(path) == [
        f"parameters cell does not parse: {path} [parameters cell]:2: "
        "only 'name = value' assignments are allowed in a parameters cell: 'import os'"]


def test_checker_wants_each_parameter_on_one_line(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "01_m.ipynb", "a = [1,\n     2]  # the a", ["print(a)"])
    assert hygiene_problems(path) == [
        f"parameters cell does not parse: {path} [parameters cell]:1: each parameter must fit on one line "
        "(papermill reads the parameters cell line by line): 'a = [1,'"]


def test_checker_wants_papermill_to_read_every_parameter_as_written(tmp_path: Path) -> None:
    path = make_notebook(tmp_path / "01_q.ipynb", "a = 1  # the a\nb = ''  # text, empty = none", ["print(a)"])
    problems = hygiene_problems(path)
    assert problems and all("papermill" in p and "'b'" in p for p in problems), problems


def test_property_tests_have_no_deadline() -> None:
    """One settings profile (tests/conftest.py) lifts hypothesis' 200 ms deadline for every property test."""
    from hypothesis import settings

    assert settings.default.deadline is None
