"""Entry point of the ``chronojoin`` command: ``main(argv) -> int``.

Sub-commands live in :mod:`chronojoin.cli.commands`, one module each, imported only
when named (or for ``--help``), so that ``chronojoin --help`` does not start Spark.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from chronojoin.cli.errors import CliError, first_line
from chronojoin.cli.session import check_not_input, check_output
from chronojoin.errors import ChronojoinError

#: command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "generate data, run an as-of join locally, print the result and timings"),
    "generate": ("generate", "write seeded benchmark datasets (Parquet)"),
    "asof": ("asof", "point-in-time (as-of) join of two tables"),
    "interval": ("interval", "aggregate the intervals that cover each point"),
    "band": ("band", "band (time-range) join of two tables"),
    "interval-join": ("interval_join", "point-in-interval or interval-overlap join"),
    "load": ("load", "deduplicating incremental append into a partitioned table"),
    "bench": ("bench", "run benchmarks and write reports"),
}

_VERBOSE = "print the library's choices (strategy, bin size and why) on standard error"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the parser; with ``only``, import just that command's module."""
    from chronojoin import __version__

    parser = argparse.ArgumentParser(
        prog="chronojoin",
        description="Time-based joins on Apache Spark without cartesian products.",
    )
    parser.add_argument("--version", action="version", version=f"chronojoin {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help=_VERBOSE)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        # before or after the command; the command's default would reset the first
        p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                       help=_VERBOSE)
        if only in (None, name):
            _module(module).add_arguments(p)
            # argparse has no public list of a parser's options; ``_actions`` is it.
            flags = {a.dest: max(a.option_strings, key=len)
                     for a in p._actions if a.option_strings and a.dest != "help"}
            p.set_defaults(_flags={**flags, **getattr(_module(module), "FLAGS", {})})
    return parser


def in_cli_terms(message: str, flags: dict[str, str]) -> str:
    """A library message with the options' names where it names arguments.

    Each argument name in backticks that has an option becomes that option, wherever
    it stands: ``bucket_width`` becomes ``--bucket-width``; ``right[1].on`` becomes
    ``--right-on (right table 2)``; ``on_duplicate='fail'`` becomes ``--on-duplicate
    fail``; ``aggs['n']`` (an entry of a dict) becomes ``--agg n``. A name with no
    option (``left``, ``right``: the input paths) stays as it is. A right table of
    several, ``right[1]`` (``right table #1``) to the library, is ``right table 2``:
    tables are counted from one on the command line. A duration is text on the
    command line: "a datetime.timedelta or a string such as" becomes "a duration such
    as".
    """
    def term(found: re.Match[str]) -> str:
        entry = re.fullmatch(r"(\w+)\[('[^']*'|\"[^\"]*\")\]", found.group(1))
        if entry is not None:
            flag = flags.get(entry.group(1))
            return found.group(0) if flag is None else f"{flag} {entry.group(2)[1:-1]}"
        name, _, value = found.group(1).partition("=")
        table = ""
        of_table = re.fullmatch(r"right\[(\d+)\]\.(\w+)", name)
        if of_table is not None:
            name = f"right.{of_table.group(2)}"
            table = f" (right table {int(of_table.group(1)) + 1})"
        flag = flags.get(name)
        if flag is None:
            return found.group(0)
        given = f" {value.strip(chr(39))}" if value else ""  # `on_duplicate='fail'`
        return f"{flag}{given}{table}"

    message = re.sub(r"`([^`]+)`", term, message)
    # a duration on the command line is text: "1 hour", not a Python timedelta
    message = message.replace(", a datetime.timedelta or a string such as",
                              " or a duration such as")
    message = message.replace("a datetime.timedelta or a string such as",
                              "a duration such as")
    return re.sub(r"\bright\[(\d+)\](?: \(right table #\d+\))?(?![.\w])",
                  lambda found: f"right table {int(found.group(1)) + 1}", message)


def _module(name: str):  # type: ignore[no-untyped-def]
    return importlib.import_module(f"chronojoin.cli.commands.{name}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args_list if a in COMMANDS), None)
    parser = build_parser(only=command or "")
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    with _choices_on_stderr(args.verbose):
        return _execute(args)


@contextlib.contextmanager
def _choices_on_stderr(on: bool) -> Iterator[None]:
    """While ``on``, the library's INFO lines (the choices of ``auto``) go to stderr."""
    if not on:
        yield
        return
    logger = logging.getLogger("chronojoin")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("chronojoin: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _execute(args: argparse.Namespace) -> int:
    try:
        module = _module(COMMANDS[args.command][0])
        # An output over an input, whatever the mode and wherever the files are; one
        # that exists or cannot be written, before Spark starts (a Connect server
        # writes on its own file system: it says so after the join).
        if hasattr(args, "mode") and getattr(args, "out", None):
            check_not_input(args.out, _input_paths(args, module))
            if not getattr(args, "remote", None):
                check_output(args.out, args.mode)
        result: int = module.execute(args)
    except CliError as exc:
        print(f"chronojoin {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, FileNotFoundError) as exc:
        message = in_cli_terms(first_line(exc), _flags(args))
        print(f"chronojoin {args.command}: error: {message}", file=sys.stderr)
        return 2
    except ChronojoinError as exc:  # a load that cannot proceed (duplicates, a lock)
        message = in_cli_terms(first_line(exc), _flags(args))
        print(f"chronojoin {args.command}: error: {message}", file=sys.stderr)
        return 1
    return result


def _flags(args: argparse.Namespace) -> dict[str, str]:
    """The option of each library argument, for :func:`in_cli_terms`.

    The library names the time column of a right table ``right_on`` (or
    ``right[i].on``) also when it came from ``on``: with ``--on`` alone (no
    ``--left-on``, no ``--right-on``) the user gave it as ``--on``.
    """
    flags = dict(getattr(args, "_flags", {}))
    if getattr(args, "on", None) is not None and getattr(args, "left_on", None) is None \
            and getattr(args, "right_on", None) is None:
        flags.update({"left_on": "--on", "right_on": "--on", "right.on": "--on"})
    return flags


def _input_paths(args: argparse.Namespace, module: Any) -> list[str]:
    """The input paths of a command (its ``INPUTS`` arguments); none for table names."""
    if getattr(args, "format", None) == "table":
        return []
    paths: list[str] = []
    for name in getattr(module, "INPUTS", ()):
        value = getattr(args, name)
        paths.extend(value if isinstance(value, list) else [value])
    return paths


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
