"""Every docstring example in the package runs as a test, with ``spark`` and ``cj`` given."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import chronojoin as cj

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(cj.__path__, prefix="chronojoin.")
    if (".cli." not in m.name or m.name.endswith("options")) and m.name != "chronojoin.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(spark, name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    tests = finder.find(module, globs={**vars(module), "spark": spark, "cj": cj})
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
