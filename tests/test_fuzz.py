"""The random differential run of :mod:`tests.fuzz`, a few cases of each family.

The suite keeps the harness working; longer runs are ``python -m tests.fuzz``.
"""

from __future__ import annotations

import io

import pytest

from tests.fuzz import CASES, run


@pytest.mark.parametrize("family", list(CASES))
def test_random_cases_match_the_references(spark, family):
    out = io.StringIO()
    assert run(spark, family, seed=20_261_125, cases=4, out=out) == 0, out.getvalue()
