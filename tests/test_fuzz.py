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


#: Session settings users change that the plans must not depend on: the legacy
#: (non-ANSI) SQL mode with a session time zone that has daylight saving time, and a
#: session without adaptive execution or broadcasts, with a few shuffle partitions.
SETTINGS = {
    "legacy_new_york": {"spark.sql.ansi.enabled": "false",
                        "spark.sql.session.timeZone": "America/New_York"},
    "static_no_broadcast": {"spark.sql.adaptive.enabled": "false",
                            "spark.sql.autoBroadcastJoinThreshold": "-1",
                            "spark.sql.shuffle.partitions": "3"},
}


@pytest.mark.parametrize("family", list(CASES))
@pytest.mark.parametrize("settings", list(SETTINGS))
def test_random_cases_match_under_other_session_settings(spark, family, settings):
    previous = {key: spark.conf.get(key) for key in SETTINGS[settings]}
    for key, value in SETTINGS[settings].items():
        spark.conf.set(key, value)
    out = io.StringIO()
    try:
        failed = run(spark, family, seed=20_261_128, cases=2, out=out)
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)
    assert failed == 0, out.getvalue()
