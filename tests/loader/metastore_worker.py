"""Load into a metastore table in a Hive-enabled session of its own (embedded Derby).

Usage: ``python metastore_worker.py TMPDIR``; prints one JSON line of results. Only one
SparkSession can exist per process, so the test suite runs this in a subprocess.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import warnings

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

SCHEMA = "user_id long, click_id string, event_date date, seq long"
D1, D2 = dt.date(2024, 1, 1), dt.date(2024, 1, 2)


def main() -> None:

    tmp = sys.argv[1]
    from tests.servers import metastore_conf, short_lived_builder

    builder = short_lived_builder("chronojoin-metastore")
    for key, value in metastore_conf(tmp).items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    from chronojoin import IncrementalLoader
    from chronojoin.errors import IndexRebuiltWarning

    out = {}
    ld = IncrementalLoader(spark, table="clicks", keys=["user_id", "click_id"], order_by="seq")
    first = spark.createDataFrame([(1, "a", D1, 1), (1, "a", D1, 2), (2, "b", D2, 3)], SCHEMA)
    out["first"] = ld.append(first).as_dict()
    second = spark.createDataFrame([(2, "b", D2, 4), (3, "c", D2, 5)], SCHEMA)
    out["second"] = ld.append(second).as_dict()
    out["rows"] = sorted(tuple(map(str, r)) for r in spark.table("clicks").collect())
    out["partitions"] = sorted(r[0] for r in spark.sql("SHOW PARTITIONS clicks").collect())
    out["check_ok"] = ld.check().ok
    # a table created outside the loader, then adopted (its index is built with a warning)
    spark.sql("CREATE TABLE events (id long, v string, day int) USING parquet "
              "PARTITIONED BY (day)")
    spark.sql("INSERT INTO events VALUES (1, 'x', 7), (2, 'y', 7)")
    ev = IncrementalLoader(spark, table="events", keys="id", partition_by="day")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = ev.append(spark.createDataFrame([(2, "z", 7), (3, "w", 8)],
                                            "id long, v string, day int"))
    out["adopt"] = r.as_dict()
    out["adopt_warned"] = any(issubclass(w.category, IndexRebuiltWarning) for w in caught)
    out["adopt_count"] = spark.table("events").count()
    print("RESULT " + json.dumps(out, default=str), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
