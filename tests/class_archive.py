"""Write the class-data archive of a short-lived session (see ``tests.servers``).

Usage: ``python -m tests.class_archive ARCHIVE TMPDIR``. Runs what the short-lived
sessions of the tests run (an incremental load into a partitioned table) in a session
whose JVM writes the classes it loaded to ``ARCHIVE`` at exit.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def main() -> None:
    archive, parent = sys.argv[1], sys.argv[2]
    from tests.servers import short_lived_builder, short_lived_java_options

    options = f"{short_lived_java_options()} -XX:ArchiveClassesAtExit={archive} -Xlog:cds=off"
    spark = (short_lived_builder("chronojoin-class-archive")
             .config("spark.driver.extraJavaOptions", options).getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    import chronojoin as cj

    rows = [(u, f"c{u % 3}", dt.date(2024, 1, 1 + u % 2), u) for u in range(20)]
    batch = spark.createDataFrame(rows, "user_id long, click_id string, event_date date, seq long")
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        batch.write.parquet(os.path.join(tmp, "batch"))
        loader = cj.IncrementalLoader(spark, path=os.path.join(tmp, "table"),
                                      keys=["user_id", "click_id"], partition_by="event_date",
                                      order_by="seq")
        loader.append(spark.read.parquet(os.path.join(tmp, "batch")))
    spark.stop()


if __name__ == "__main__":
    main()
