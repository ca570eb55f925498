"""Random sequences of loads against a reference computed from the batches' own rows.

One case draws a table (a directory, or a metastore table in a session that has a
metastore; key columns of every comparable type, a partition column of every
supported type, Parquet or ORC, an ``order_by``, a policy) and one to four batches
whose keys collide within and across batches: floats with ``-0.0``, ``NaN`` and
infinities, strings with the characters Spark escapes in directory names, dates and
timestamps far from 1970, arrays; some tables also hold a map column, which Spark can
neither hash nor order. Some batches come back (reordered, or under a new
id), some loads start from a new loader object, some lose a partition's key index
first and some follow ``rebuild_index()``. After every ``append`` the report and the
whole table are checked:

* each ``(partition, key)`` is stored once; the rows stored before are unchanged;
* a new row is one of its key's batch rows that come first by ``order_by`` (ties and
  no ``order_by`` leave the choice to the loader);
* the counts are the reference's, ``on_duplicate="fail"`` writes nothing when it
  raises, ``"allow"`` appends every row, a batch seen before is skipped;
* ``check()`` finds the index equal to the data, except for the partitions whose
  index was lost and that no load has touched since (their keys count as missing).

Keys compare as Spark compares them: ``-0.0`` equals ``0.0`` and ``NaN`` equals
``NaN``.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import random
import shutil
import tempfile
import uuid
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import IndexRebuiltWarning, LoaderError
from chronojoin.loader import target
from chronojoin.loader.layout import partition_dir

D = decimal.Decimal
#: type name -> a few values (small pools, so keys collide)
KEY_VALUES: dict[str, list[Any]] = {
    "long": [0, 1, -1, 7, 2**62],
    "int": [0, 3, -2_147_483_648],
    "string": ["a", "A", "a ", "", "é", "x/y", "k=v", "%41", "null", "\t"],
    "double": [0.0, -0.0, 1.5, math.nan, math.inf, -math.inf, 5e-324],
    "float": [0.0, -0.0, 2.5, math.nan],
    "date": [dt.date(1970, 1, 1), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2024, 2, 29)],
    "timestamp": [dt.datetime(2024, 3, 10, 2, 30), dt.datetime(1900, 1, 1, 0, 0, 0, 1),
                  dt.datetime(2024, 1, 1)],
    "decimal(12,3)": [D("0.000"), D("1.100"), D("-999999999.999")],
    "boolean": [True, False],
    "binary": [b"", b"\x00", b"ab"],
    "array<int>": [[], [1], [1, 2], [None]],
}
PARTITION_VALUES: dict[str, list[Any]] = {
    "date": [dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(1969, 12, 31)],
    "string": ["a", "b b", "x/y", "k=v", "ü", "%", "100", "NULL"],
    "int": [0, -1, 100],
    "long": [2**40, 5],
    "short": [1, -7],
    "tinyint": [0, 127],
    "boolean": [True, False],
}
#: order_by choices: (what the loader gets, built when a session is up; the sort key
#: of a batch row that the reference ranks by)
ORDERS: dict[str, tuple[Callable[[], Any], Callable[[dict[str, Any]], tuple] | None]] = {
    "none": (lambda: None, None),
    "seq": (lambda: "seq", lambda r: (_nulls(r["seq"], first=True),)),
    "seq desc": (lambda: F.col("seq").desc(),
                 lambda r: (_nulls(r["seq"], first=False, desc=True),)),
    "seq nulls last": (lambda: F.col("seq").asc_nulls_last(),
                       lambda r: (_nulls(r["seq"], first=False),)),
    "prio, seq desc": (lambda: ["prio", F.col("seq").desc()],
                       lambda r: (_nulls(r["prio"], first=True),
                                  _nulls(r["seq"], first=False, desc=True))),
    "seq % 3": (lambda: F.col("seq") % 3,
                lambda r: (_nulls(None if r["seq"] is None else r["seq"] % 3, first=True),)),
}


def _nulls(value: Any, *, first: bool, desc: bool = False) -> tuple:
    """A sort key placing NULL first or last, descending when ``desc``."""
    if value is None:
        return (0 if first else 2, 0)
    return (1, -value if desc else value)


def norm(value: Any) -> Any:
    """A hashable value that is equal where Spark's key comparison says equal."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else (0.0 if value == 0 else value)
    if isinstance(value, (list, tuple)):
        return tuple(norm(v) for v in value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, dict):
        return ("map", tuple(sorted(value.items())))
    return value


def load_case(spark: Any, rng: random.Random) -> dict[str, Any]:
    """One table and one to four loads, each checked against the reference."""
    key_types = [rng.choice(list(KEY_VALUES)) for _ in range(rng.choice([1, 1, 2, 3]))]
    ptype = rng.choice(list(PARTITION_VALUES))
    opts: dict[str, Any] = {
        "keys": key_types, "partition": ptype, "format": rng.choice(["parquet", "orc"]),
        "order_by": rng.choice(list(ORDERS)),
        "on_duplicate": rng.choice(["drop", "drop", "drop", "fail", "allow"]),
        # a metastore table where the session has one (``--metastore``), else a directory
        "table": metastore(spark) and rng.random() < 0.7,
        "map": rng.random() < 0.3,  # a payload column of a type Spark cannot hash
    }
    pvalues = rng.sample(PARTITION_VALUES[ptype], rng.randint(1, len(PARTITION_VALUES[ptype])))

    def batch_rows(n: int) -> list[tuple]:
        return [(*(rng.choice(KEY_VALUES[t]) for t in key_types), rng.choice(pvalues),
                 rng.choice([None, *range(4)]) if rng.random() < 0.5 else rng.randrange(10**6),
                 rng.choice([None, 0, 1]), rng.choice(["x", "y", None, "ü" * 3]),
                 *([rng.choice([None, {}, {"a": 1}, {"a": 2, "b": None}])] if opts["map"] else []))
                for _ in range(n)]

    root = tempfile.mkdtemp(prefix="chronojoin-load-")
    table = _Table(spark, os.path.join(root, "t"), opts,
                   f"cj_fuzz_{uuid.uuid4().hex[:12]}" if opts["table"] else None)
    errors: list[str] = []
    steps: list[str] = []
    earlier: list[list[tuple]] = []
    try:
        for _ in range(rng.randint(1, 4)):
            what = rng.choice(["new", "new", "new", "again", "new id", "fresh loader",
                               "lost index", "lost index", "rebuilt index"]) if earlier else "new"
            rows = (rng.choice(earlier) if what in ("again", "new id")
                    else batch_rows(rng.choice([0, 1, 5, 40, 150])))
            if what == "again":
                rows = rng.sample(rows, len(rows))
            if what == "fresh loader":
                table.loader = table.new_loader()
            if what == "lost index" and (index := table.index_dir()) and os.listdir(index):
                lost = rng.choice(os.listdir(index))
                shutil.rmtree(os.path.join(index, lost))
                table.lost.add(lost)
            if what == "rebuilt index":
                table.loader.rebuild_index()
                table.lost.clear()
            steps.append(f"{what}:{len(rows)}")
            earlier.append(rows)
            batch = spark.createDataFrame(rows, table.schema)
            batch = batch.select(*rng.sample(table.columns, len(table.columns)))  # any order
            errors += table.load(batch, batch_id=f"b{len(steps)}" if what == "new id" else None)
            if errors:
                break
    finally:
        if table.name:
            spark.sql(f"DROP TABLE IF EXISTS {table.name}")
        shutil.rmtree(root, ignore_errors=True)
    return {**opts, "steps": steps, "errors": errors}


def metastore(spark: Any) -> bool:
    """Whether ``spark`` keeps tables in a Hive metastore (built with Hive support)."""
    return spark.conf.get("spark.sql.catalogImplementation", "in-memory") == "hive"


class _Table:
    """A table under test: its loader, what it holds, and the checks of one load."""

    def __init__(self, spark: Any, path: str, opts: dict[str, Any], name: str | None) -> None:
        self.spark, self.path, self.opts, self.name = spark, path, opts, name
        self.keys = [f"k{i}" for i in range(len(opts["keys"]))]
        self.columns = [*self.keys, "p", "seq", "prio", "v", *(["m"] if opts["map"] else [])]
        self.schema = ", ".join([*(f"{k} {t}" for k, t in zip(self.keys, opts["keys"],
                                                              strict=True)),
                                 f"p {opts['partition']}", "seq long", "prio int", "v string",
                                 *(["m map<string,int>"] if opts["map"] else [])])
        #: where ``(partition, *keys)`` sit in a row of :attr:`columns`
        self._key_at = [self.columns.index(c) for c in ["p", *self.keys]]
        make_order, self.order_key = ORDERS[opts["order_by"]]
        self.order_by = make_order()
        self.loader = self.new_loader()
        self.stored: Counter = Counter()  # the rows read back after the last load
        self.sent: list[Counter] = []  # batches committed under their content's id
        #: partition directories whose index was deleted and not rebuilt since
        self.lost: set[str] = set()

    def new_loader(self) -> cj.IncrementalLoader:
        where = {"table": self.name} if self.name else {"path": self.path}
        return cj.IncrementalLoader(self.spark, keys=self.keys, partition_by="p",
                                    format=self.opts["format"], order_by=self.order_by,
                                    on_duplicate=self.opts["on_duplicate"], **where)

    def index_dir(self) -> str | None:
        """The directory of the table's key index (``None`` before the first load)."""
        root = self.path
        if self.name is not None:
            if not self.spark.catalog.tableExists(self.name):
                return None
            root = target.table_target(self.spark, self.name, partition_by="p",
                                       fmt=self.opts["format"]).root
        index = os.path.join(root, "_chronojoin", "index")
        return index if os.path.isdir(index) else None

    def key_of(self, row: tuple) -> tuple:
        """``(partition, *keys)`` of a normalised row."""
        return tuple(row[i] for i in self._key_at)

    def read(self) -> Counter:
        """The table's normalised rows as read back (partition column typed by the schema).

        A metastore table is read through the catalog: only the partitions the loader
        registered are seen.
        """
        if self.name is not None:
            if not self.spark.catalog.tableExists(self.name):
                return Counter()
            self.spark.catalog.refreshTable(self.name)
            df = self.spark.table(self.name)
        elif not os.path.isdir(self.path):
            return Counter()
        else:
            df = self.spark.read.schema(self.schema).format(self.opts["format"]).load(self.path)
        return Counter(norm(tuple(r)) for r in df.select(*self.columns).collect())

    def load(self, batch: Any, *, batch_id: str | None) -> list[str]:
        """Append ``batch`` and check the report and the table; return what was wrong."""
        given = [norm(tuple(r)) for r in batch.select(*self.columns).collect()]
        groups: dict[tuple, list[tuple]] = {}
        for row in given:
            groups.setdefault(self.key_of(row), []).append(row)
        before = {self.key_of(r) for r in self.stored}
        policy = self.opts["on_duplicate"]
        in_batch = len(given) - len(groups) if policy != "allow" else 0
        existing = len(set(groups) & before) if policy != "allow" else 0
        replay = batch_id is None and Counter(given) in self.sent
        if given and not replay:  # an append repairs the index of the partitions it touches
            self.lost -= {partition_dir("p", key[0]) for key in groups}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IndexRebuiltWarning)
                report = self.loader.append(batch, batch_id=batch_id)
        except LoaderError as e:
            if policy == "fail" and (in_batch or existing) and not replay:
                return [] if self.read() == self.stored else [
                    f"on_duplicate='fail' raised ({e}) but the table changed"]
            return [f"raised {e!r}"[:300]]
        after = self.read()
        new, lost = after - self.stored, self.stored - after
        errors = [f"rows stored before are gone: {list(lost)[:3]}"] if lost else []
        if not given:
            want: tuple = (0, 0, 0, 0, False)
        elif replay:
            want = (len(given), 0, in_batch, len(given) - in_batch, True)
        elif policy == "allow":
            want = (len(given), len(given), 0, 0, False)
        else:
            want = (len(given), len(groups) - existing, in_batch, existing, False)
        got = (report.rows_in, report.rows_appended, report.duplicates_in_batch,
               report.duplicates_existing, report.skipped)
        if got != want:
            errors.append(f"report {got}, expected {want}")
        if want[4] or not given:
            if new:
                errors.append(f"a skipped or empty batch wrote {sum(new.values())} row(s)")
        elif policy == "allow":
            if new != Counter(given):
                errors.append("allow: the appended rows are not the batch's")
        else:
            errors += self._winners(new, groups, before)
        if not errors and given and batch_id is None and not report.skipped:
            self.sent.append(Counter(given))  # the same rows come back skipped
        if policy != "allow" and not errors:
            errors += self._unique(after)
        self.stored = after
        return errors

    def _winners(self, new: Counter, groups: dict[tuple, list[tuple]],
                 before: set[tuple]) -> list[str]:
        """One new row per key not stored before, each a winner among its batch rows."""
        wanted = set(groups) - before
        added = Counter(self.key_of(row) for row in new.elements())
        if set(added) != wanted or any(n != 1 for n in added.values()):
            return [f"appended keys differ: missing {list(wanted - set(added))[:3]}, "
                    f"unexpected {list(set(added) - wanted)[:3]}, "
                    f"twice {[k for k, n in added.items() if n > 1][:3]}"]
        for row in new:
            rows = groups[self.key_of(row)]
            if self.order_key is not None:
                ranks = [self.order_key(dict(zip(self.columns, r, strict=True))) for r in rows]
                best = min(ranks)
                rows = [r for r, rank in zip(rows, ranks, strict=True) if rank == best]
            if row not in rows:
                return [f"row {row} is not a winner of its key"]
        return []

    def _unique(self, after: Counter) -> list[str]:
        """No key stored twice, and ``check()`` finds the index equal to the data."""
        counts = Counter(self.key_of(r) for r in after.elements())
        twice = [k for k, n in counts.items() if n > 1]
        if twice:
            return [f"keys stored twice: {twice[:3]}"]
        check = self.loader.check()
        if not self.lost:
            return [] if check.ok else [f"check: {check}"]
        # a lost index stays lost until a load touches its partition (or a rebuild)
        unindexed = sum(partition_dir("p", key[0]) in self.lost for key in counts)
        want = (after.total(), after.total(), 0, unindexed, 0, len(self.lost))
        got = (check.rows, check.keys, check.duplicate_keys, check.missing_from_index,
               check.extra_in_index, check.incomplete_partitions)
        return [] if got == want else [f"check {got}, expected {want}"]


__all__ = ["load_case", "metastore", "norm"]
