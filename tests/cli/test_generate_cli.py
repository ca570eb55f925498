"""``chronojoin generate`` in process: options checked before Spark, what it writes."""

from __future__ import annotations

import argparse
import shlex


def test_hive_conf_hint_survives_a_shell(tmp_path, capsys, monkeypatch):
    """The metastore URL holds ';': the printed options are quoted for a shell."""
    from chronojoin.cli.commands import generate

    monkeypatch.setattr("chronojoin.datagen.write_bucketed",
                        lambda tables, *, buckets, **kw: {t: f"db.{t}_b{buckets}" for t in tables})
    out = str(tmp_path / "a dir")
    args = argparse.Namespace(kind="thesis", ids=5, seed=0, database="db", out=out)
    generate._bucketed({"left": None, "right": None}, args, (2,))
    printed = capsys.readouterr().out
    words = shlex.split(printed.split("these confs: ", 1)[1])
    assert words == [w for k, v in generate._hive_conf(out).items()
                     for w in ("--conf", f"{k}={v}")]
    assert words[-1].endswith(";create=true")
