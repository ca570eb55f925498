"""The public surface: exactly API.md's names plus the errors, stable signatures, typed.

Regenerate the signature snapshot after an intended change with::

    CHRONOJOIN_UPDATE_SIGNATURES=1 python -m pytest tests/api
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chronojoin as cj
from chronojoin import errors

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("signatures.txt")

#: the names API.md fixes
API_NAMES = {
    "asof_join", "Right", "interval_aggregate", "band_join", "interval_join",
    "IncrementalLoader", "LoadReport",
}

#: modules that make up the public API, checked with ``mypy --strict``
PUBLIC_MODULES = [
    "src/chronojoin/__init__.py",
    "src/chronojoin/errors.py",
    "src/chronojoin/_typing.py",
    "src/chronojoin/asof/api.py",
    "src/chronojoin/intervals/api.py",
    "src/chronojoin/band/api.py",
    "src/chronojoin/interval_join/api.py",
    "src/chronojoin/loader/loader.py",
    "src/chronojoin/loader/report.py",
]


def _error_names() -> set[str]:
    return {
        name for name, obj in vars(errors).items()
        if isinstance(obj, type) and issubclass(obj, (cj.ChronojoinError, Warning))
        and obj.__module__ == errors.__name__
    }


def test_all_is_api_names_plus_errors():
    assert set(cj.__all__) == API_NAMES | _error_names()
    assert len(cj.__all__) == len(set(cj.__all__))
    for name in cj.__all__:
        assert getattr(cj, name) is not None


def test_no_other_public_names():
    public = {n for n in vars(cj) if not n.startswith("_") and not inspect.ismodule(getattr(cj, n))}
    assert public - {"annotations"} == set(cj.__all__)


def test_errors_are_builtin_subclasses_as_api_md_says():
    assert issubclass(cj.InvalidArgumentError, ValueError)
    assert issubclass(cj.ColumnNotFoundError, ValueError)
    assert issubclass(cj.DurationError, ValueError)
    assert issubclass(cj.TimeTypeError, TypeError)
    assert issubclass(cj.PerformanceWarning, Warning)
    assert issubclass(cj.IndexRebuiltWarning, Warning)


def signatures() -> str:
    """One line per public callable (and LoadReport's fields), sorted by name."""
    items = {
        "asof_join": cj.asof_join,
        "interval_aggregate": cj.interval_aggregate,
        "band_join": cj.band_join,
        "interval_join": cj.interval_join,
        "Right": cj.Right,
        "IncrementalLoader.__init__": cj.IncrementalLoader.__init__,
        "IncrementalLoader.append": cj.IncrementalLoader.append,
        "IncrementalLoader.rebuild_index": cj.IncrementalLoader.rebuild_index,
        "IncrementalLoader.check": cj.IncrementalLoader.check,
    }
    lines = []
    for name, fn in items.items():
        sig = inspect.signature(fn)
        params = []
        for p in sig.parameters.values():
            text = str(p)
            if p.default is not inspect.Parameter.empty and type(p.default) is object:
                # a sentinel default prints its address: keep only that it is unset
                text = text.split(" = ", maxsplit=1)[0] + " = <unset>"
            params.append(text)
        star = [p.kind for p in sig.parameters.values()]
        if inspect.Parameter.KEYWORD_ONLY in star and inspect.Parameter.VAR_POSITIONAL not in star:
            first = star.index(inspect.Parameter.KEYWORD_ONLY)
            params.insert(first, "*")
        lines.append(f"{name}({', '.join(params)}) -> {sig.return_annotation}")
    lines.extend(
        f"LoadReport.{f.name}: {f.type}" for f in dataclasses.fields(cj.LoadReport)
    )
    return "\n".join(lines) + "\n"


def test_signatures_match_snapshot():
    current = signatures()
    if os.environ.get("CHRONOJOIN_UPDATE_SIGNATURES"):
        SNAPSHOT.write_text(current)
    expected = SNAPSHOT.read_text()
    assert current == expected, (
        "a public signature changed; if intended, regenerate with "
        "CHRONOJOIN_UPDATE_SIGNATURES=1 python -m pytest tests/api"
    )


def test_data_frames_positional_everything_else_keyword_only():
    for fn in (cj.asof_join, cj.interval_aggregate, cj.band_join, cj.interval_join):
        params = list(inspect.signature(fn).parameters.values())
        assert [p.kind for p in params[:2]] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * 2
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:]), fn


def test_load_report_has_api_md_fields():
    names = {f.name for f in dataclasses.fields(cj.LoadReport)}
    assert {"rows_in", "rows_appended", "duplicates_in_batch", "duplicates_existing",
            "partitions_touched", "seconds"} <= names


@pytest.mark.slow
def test_mypy_strict_on_public_modules():
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *PUBLIC_MODULES],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
