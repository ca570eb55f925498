"""The only place that builds a SparkSession, and input/output helpers for commands."""

from __future__ import annotations

import argparse
import contextlib
import os
import posixpath
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from chronojoin._paths import is_pattern, local_path, matches
from chronojoin._session import is_connect
from chronojoin.cli.errors import CliError, first_line
from chronojoin.cli.options import key_value_pairs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def require_java() -> None:
    """Stop with a clear message when no Java runtime is installed."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        msg = (
            "Java is required (Spark runs on the JVM): install Java 17, e.g. "
            "`apt-get install openjdk-17-jre-headless`, or set JAVA_HOME"
        )
        raise CliError(msg)


def session(
    args: argparse.Namespace,
    app: str = "chronojoin",
    *,
    hive: bool = False,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Build (or reuse) the SparkSession for ``--master`` and ``--conf``.

    ``hive=True`` enables Hive support (a persistent metastore, e.g. for bucketed
    tables), as does reading the inputs as table names (``--format table`` or
    ``--input-format table``); ``conf`` holds a command's own defaults, which
    ``--conf`` overrides. With ``--remote`` (the join commands) a Spark Connect session
    instead, whose server reads and writes the paths.
    """
    from pyspark.sql import SparkSession

    remote = getattr(args, "remote", None)
    if remote:
        # A Spark Connect client: the server holds the JVM, the files and the confs it
        # was started with; only session settings travel with the connection.
        _check_reachable(remote)
        builder = SparkSession.builder.remote(remote)
    else:
        require_java()
        if binds_loopback(args.master):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = SparkSession.builder.master(args.master).appName(app)
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        reads_tables = "table" in (getattr(args, "format", None),
                                    getattr(args, "input_format", None))
        if hive or reads_tables:
            builder = builder.enableHiveSupport()
    settings = {"spark.sql.session.timeZone": "UTC", **(conf or {}),
                **key_value_pairs(getattr(args, "conf", []))}
    for key, value in settings.items():
        builder = builder.config(key, value)
    if remote:
        try:
            return builder.getOrCreate()
        except Exception as exc:  # no server, or no connect extra installed
            msg = f"--remote {remote}: cannot connect: {first_line(exc)}"
            if "PACKAGE_NOT_INSTALLED" in str(exc):
                msg += " (install the connect extra: pip install 'chronojoin[connect]')"
            raise CliError(msg) from exc
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: its own message went to stderr
        msg = f"--master {args.master}: cannot start Spark: {spark_message(exc)}"
        raise CliError(msg) from exc
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def binds_loopback(master: str) -> bool:
    """Whether the driver for ``master`` binds to 127.0.0.1 (``SPARK_LOCAL_IP``).

    So for a local master and a standalone master on this machine's loopback address;
    a cluster's executors (``spark://host:7077``, YARN, Kubernetes) must reach the
    driver at an address of the network, which Spark finds itself.
    """
    if master.startswith("local"):
        return True
    parsed = urlparse(master)
    return parsed.scheme == "spark" and parsed.hostname in ("127.0.0.1", "localhost")


def spark_message(exc: BaseException) -> str:
    """The line of a Spark error that says what went wrong.

    A JVM error reaches Python as ``An error occurred while calling o35.parquet.`` and a
    Java stack trace; the line naming Spark's error class (``[FAILED_READ_FILE...] ...``)
    or, failing that, the first ``...Exception: message`` line is the one a user needs.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for pattern in (_ERROR_CLASS, _JAVA_EXCEPTION):
        for line in lines:
            found = pattern.search(line)
            if found:
                return line[found.start():]
    return first_line(exc)


#: ``[ERROR_CLASS] message`` / ``[ERROR_CLASS.SUB_CLASS] message``, Spark's error format.
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\] ")
#: ``java.io.IOException: message`` after an optional ``: `` or ``Caused by: ``.
_JAVA_EXCEPTION = re.compile(r"(?<![\w.])(?:[a-z]\w*\.)+\w*(?:Exception|Error): \S")


#: The timestamps Spark's JSON writer emits (``2024-01-01T12:00:00.000Z``), with up to
#: six digits of fraction and an optional offset. JSON inputs infer timestamps in this
#: form only: Spark's default pattern also takes ``"2024"`` and ``"2024-01-02"`` for times.
JSON_TIMESTAMPS = "yyyy-MM-dd'T'HH:mm:ss[.SSSSSS][XXX]"

#: The input format a path's extension stands for (any other path: Parquet).
_EXTENSIONS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".ndjson": "json",
               ".orc": "orc"}


def input_format(path: str, fmt: str | None = None) -> str:
    """The format of an input path: ``fmt``, else its extension's, else Parquet."""
    return fmt or _EXTENSIONS.get(os.path.splitext(path.rstrip("/"))[1].lower(), "parquet")


def read(spark: SparkSession, path: str, fmt: str | None = None, *,
         flag: str = "--format") -> DataFrame:
    """Read an input: a Parquet, CSV, ORC or JSON path, or (``fmt="table"``) a table name.

    A missing or unreadable input is a one-line error; ``flag`` is the option that
    names the format, for the hint on a missing path that may be a table name.
    """
    remote = is_connect(spark)
    if fmt == "table":
        return _table(spark, path)
    local = local_path(path)  # a local path, or a file: URL's (file:/x as file:///x)
    if not remote and local is not None and is_pattern(local):
        if not matches(local):  # Spark reads every match of a pattern as one input
            msg = f"input path does not exist: {path} (no path matches the pattern)"
            raise CliError(msg)
    elif not remote and local is not None and not os.path.exists(local):
        msg = f"input path does not exist: {path}"
        if os.sep not in path and "/" not in path:
            msg += f" (a metastore table? add {flag} table)"
        raise CliError(msg)
    fmt = input_format(path, fmt)
    try:  # a classic session reads the footers (or the CSV header) here
        with quiet(spark):
            if fmt == "csv":
                df = spark.read.csv(path, header=True, inferSchema=True)
            elif fmt == "json":
                df = (spark.read.format("json").option("inferTimestamp", "true")
                      .option("timestampFormat", JSON_TIMESTAMPS).load(path))
            else:
                df = spark.read.format(fmt).load(path)
            if remote:
                df.schema  # noqa: B018  the server resolves the path here, not at the first job
    except Exception as exc:  # a damaged or unreadable input, not a bug of the command
        msg = f"cannot read {path}: {spark_message(exc)}"
        raise CliError(msg) from exc
    return df


def _table(spark: SparkSession, name: str) -> DataFrame:
    """The metastore table ``name`` (``db.table`` or ``table``), or a one-line error."""
    try:
        with quiet(spark):
            df = spark.table(name)
            df.schema  # noqa: B018  Spark Connect resolves the name here
    except Exception as exc:  # no such table, or a name Spark cannot parse
        msg = f"cannot read table {name!r}: {spark_message(exc)}"
        raise CliError(msg) from exc
    return df


@contextlib.contextmanager
def quiet(spark: SparkSession) -> Iterator[None]:
    """Spark's log off (a classic session): the command's one-line error says what failed.

    Without it an executor's failed task prints its stack trace before that line.
    """
    remote = is_connect(spark)
    if not remote:
        spark.sparkContext.setLogLevel("OFF")
    try:
        yield
    finally:
        if not remote:
            spark.sparkContext.setLogLevel("ERROR")


def job_errors(df: DataFrame) -> tuple[type[Exception], ...]:
    """The exceptions a job over ``df`` ends in when Spark refuses it or a row fails.

    Spark's errors on either session (analysis, or a row the job cannot compute), and
    on a classic session a JVM error of no Python class of its own (an IOException, or
    a malformed record of a ``FAILFAST`` read).
    """
    from pyspark.errors import PySparkException

    if is_connect(df):
        return (PySparkException,)
    from py4j.protocol import Py4JJavaError

    return (PySparkException, Py4JJavaError)


def write(df: DataFrame, path: str, mode: str = "errorifexists") -> None:
    """Write ``df`` as Parquet; a failed write is a one-line error.

    On a classic session a local output was checked before Spark started
    (:func:`check_output`); a URL's or a Connect server's existing output, or one that
    cannot be written, is found here.
    """
    errors = job_errors(df)
    # the Connect writer knows the default mode as "error" only
    spark_mode = "error" if is_connect(df) and mode == "errorifexists" else mode
    try:
        df.write.mode(spark_mode).parquet(path)
    except errors as exc:  # the whole job runs in the write: its input's errors too
        msg = f"writing {path} failed: {spark_message(exc)}"
        if mode != "overwrite" and "PATH_ALREADY_EXISTS" in msg:
            msg += " (use --mode overwrite)"
        raise CliError(msg) from exc


def check_output(path: str, mode: str) -> None:
    """An existing output without ``--mode overwrite``, or one that cannot be written.

    :func:`chronojoin.cli.main.main` calls it for every command with ``--out`` and
    ``--mode`` before the command starts Spark (a Connect server's outputs and URLs of
    other file systems than the local one are checked by :func:`write`).
    """
    local = local_path(path)
    if mode != "overwrite" and local is not None and os.path.exists(local):
        msg = f"output path exists: {path} (use --mode overwrite)"
        raise CliError(msg)
    check_writable(path)


def check_not_input(out: str, inputs: Sequence[str], *, flag: str = "--out") -> None:
    """``out`` is neither an input path, nor a directory holding one, nor inside one.

    Writing there would delete the input (``--mode overwrite``) or add files to it.
    Local paths are compared absolute, with symbolic links resolved (a ``file:`` URL
    as its path); a local glob pattern as each path it matches; other URLs by their
    normalised text (scheme and host in lower case). ``flag`` is the option that names
    ``out``.
    """
    target = _location(out)
    for path, source in _sources(inputs):
        if target == source:
            relation = "is"
        elif _inside(source, target):
            relation = "contains"
        elif _inside(target, source):
            relation = "is inside"
        else:
            continue
        msg = (f"{flag} {out} {relation} the input {path}: writing there would destroy or "
               f"corrupt that input; choose another {flag}")
        raise CliError(msg)


def _sources(inputs: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Each input as given, with the location of each local path it names."""
    for path in inputs:
        local = local_path(path)
        if local is not None and is_pattern(local):
            for match in matches(local):
                yield path, _location(match)
        else:
            yield path, _location(path)


def _location(path: str) -> str:
    """One spelling of a location, for comparisons (see :func:`check_not_input`)."""
    local = local_path(path)
    if local is not None:
        return os.path.realpath(local)
    parsed = urlparse(path)
    return (f"{parsed.scheme.lower()}://{parsed.netloc.lower()}"
            f"{posixpath.normpath(parsed.path or '/')}")


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def check_writable(path: str) -> None:
    """Fail before any job when a local output's directory cannot be created.

    Spark would otherwise find out after the join, with a Java stack trace. URLs of
    other file systems (``hdfs://``, ``s3a://``) are left to Spark.
    """
    local = local_path(path)
    if local is None:
        return
    parent = os.path.dirname(os.path.abspath(local))
    try:
        os.makedirs(parent, exist_ok=True)
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        msg = f"cannot write {path}: {exc.strerror or exc} ({parent})"
        raise CliError(msg) from exc


def _check_reachable(url: str) -> None:
    """Fail at once when nothing listens at a ``sc://host:port`` URL.

    The Connect client would otherwise retry an unreachable server for minutes.
    """
    parsed = urlparse(url)
    if parsed.scheme != "sc" or not parsed.hostname:
        msg = f"--remote: expected a URL like sc://host:15002, got {url!r}"
        raise CliError(msg)
    try:
        socket.create_connection((parsed.hostname, parsed.port or 15002), timeout=10).close()
    except OSError as exc:
        msg = f"--remote {url}: no Spark Connect server reachable ({exc.strerror or exc})"
        raise CliError(msg) from exc
