"""Options shared by several commands, defined once."""

from __future__ import annotations

import argparse
import re


def add_master(parser: argparse.ArgumentParser, *, remote: bool = False) -> None:
    """``--master`` and ``--conf KEY=VALUE`` (repeatable); ``--remote`` when asked."""
    parser.add_argument(
        "--master", default="local[*]", type=master_url,
        help="Spark master URL, e.g. local[2] or spark://127.0.0.1:7077 (default: local[*])",
    )
    if remote:
        parser.add_argument(
            "--remote", metavar="URL",
            help="run on a Spark Connect server instead, e.g. sc://127.0.0.1:15002 "
                 "(paths are then read and written by the server; needs the connect "
                 "extra: pip install 'chronojoin[connect]')",
        )
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", type=key_value,
        help="extra Spark configuration, repeatable",
    )


def add_output(parser: argparse.ArgumentParser, *, mode_help: str | None = None) -> None:
    """``--out`` (Parquet directory) and ``--mode`` (``mode_help``: a command's own help)."""
    parser.add_argument("--out", required=True, help="output path (Parquet directory)")
    parser.add_argument(
        "--mode", default="errorifexists", choices=["errorifexists", "overwrite"],
        help=mode_help or "what to do when --out exists (default: errorifexists)",
    )


#: The input formats a command reads; ``table``: the inputs are metastore table names.
INPUT_FORMATS = ["parquet", "csv", "orc", "json", "table"]


def add_input_format(parser: argparse.ArgumentParser) -> None:
    """``--format`` of the inputs."""
    parser.add_argument(
        "--format", default=None, choices=INPUT_FORMATS,
        help="input format (default: from the file extension: .csv, .json, .jsonl, .orc, "
             "else parquet); 'table': the inputs are metastore table names, e.g. tables "
             "bucketed by the key (enables Hive support)",
    )


def split_list(value: str | None) -> list[str] | None:
    """``"a,b"`` -> ``["a", "b"]``; ``None`` stays ``None``."""
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def add_keys(parser: argparse.ArgumentParser, left: str = "the left side",
             right: str = "the right side") -> None:
    """``--by`` (both sides), ``--left-by`` and ``--right-by``: comma-separated columns.

    ``left`` and ``right`` name the sides in the help (``points``, ``intervals``).
    """
    parser.add_argument("--by", type=column_names,
                        help="equality key column(s) of both sides, comma separated")
    for side, name in (("left", left), ("right", right)):
        parser.add_argument(f"--{side}-by", type=column_names,
                            help=f"key column(s) of {name}, comma separated")


def column_names(value: str) -> str:
    """A column list's check: one name or more, comma separated, none of them empty.

    ``--by ""`` (an unset shell variable, say) is a usage error, not a join without
    keys: that is asked for by leaving the option out.
    """
    if not all(name.strip() for name in value.split(",")):
        msg = f"expected column names, comma separated; got {value!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def key_value(item: str) -> str:
    """``--conf``'s check: ``KEY=VALUE`` with a non-empty key (a usage error otherwise)."""
    key, sep, _ = item.partition("=")
    if not sep or not key.strip():
        msg = f"expected KEY=VALUE, got {item!r}"
        raise argparse.ArgumentTypeError(msg)
    return item


def key_value_pairs(items: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` -> ``{"k": "v"}``."""
    out = {}
    for item in items:
        key, _, value = key_value(item).partition("=")
        out[key.strip()] = value.strip()
    return out


#: The master URLs Spark accepts (``SparkContext`` rejects any other at start-up).
_MASTER = re.compile(r"local(\[(\d+|\*)(\s*,\s*\d+)?\])?|local-cluster\[.+\]|yarn|"
                     r"(spark|k8s)://.+")


def master_url(value: str) -> str:
    """``--master``'s check, so that a typo is a usage error rather than a JVM failure."""
    if not _MASTER.fullmatch(value.strip()):
        msg = (f"expected local, local[N], local[*], spark://HOST:PORT, yarn or "
               f"k8s://URL, got {value!r}")
        raise argparse.ArgumentTypeError(msg)
    return value.strip()
