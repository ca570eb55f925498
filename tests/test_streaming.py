"""Streaming inputs: refused before any job, and joined micro-batch by micro-batch.

chronojoin's plans read statistics and sort whole inputs, which a streaming query
cannot do; ``writeStream.foreachBatch`` hands each micro-batch over as a batch
DataFrame, which every function takes.
"""

from __future__ import annotations

import re
import tempfile

import pytest
from pyspark.sql import functions as F

import chronojoin as cj
from chronojoin.errors import InvalidArgumentError
from tests.asof.test_auto_layout import _sorted


def test_streaming_inputs_are_refused_naming_the_argument(spark, tmp_path):
    stream = spark.readStream.format("rate").load().select(
        (F.col("value") % 3).alias("k"), F.col("value").alias("t"))
    static = spark.createDataFrame([(1, 5, 0, 10)], "k long, t long, s long, e long")
    calls = {
        "left": lambda: cj.asof_join(stream, static, on="t", by="k"),
        "right": lambda: cj.asof_join(static, stream, on="t", by="k"),
        "right[0].df": lambda: cj.asof_join(static, [cj.Right(stream)], on="t", by="k"),
        "points": lambda: cj.interval_aggregate(stream, static, by="k", time="t",
                                                aggs={"n": ("count", None)}),
        "intervals": lambda: cj.interval_aggregate(static, stream.withColumnsRenamed(
            {"t": "start"}).withColumn("end", F.col("start")), by="k", time="t",
            aggs={"n": ("count", None)}),
    }
    calls["left "] = lambda: cj.band_join(stream, static, left_on="t", right_on="t",
                                          lower=-1, upper=1, by="k")
    calls["right "] = lambda: cj.interval_join(static, stream, left_start="t",
                                               right_start="t", right_end="t", by="k")
    loader = cj.IncrementalLoader(spark, path=str(tmp_path / "t"), keys=["t"],
                                  partition_by="k")
    calls["batch"] = lambda: loader.append(stream)
    for argument, call in calls.items():
        with pytest.raises(InvalidArgumentError, match=rf"^`{re.escape(argument.strip())}` is a "
                                                       r"streaming DataFrame; .*foreachBatch"):
            call()
    assert not (tmp_path / "t").exists()


def test_a_stream_joined_in_foreach_batch_equals_the_batch_join(spark, tmp_path):
    labels = [(k, t, f"l{k}_{t}") for k in range(4) for t in range(0, 60, 7)]
    features = spark.createDataFrame(
        [(k, t, float(k * 100 + t)) for k in range(4) for t in range(0, 60, 5)],
        "k int, t int, score double")
    source, out = tmp_path / "labels", tmp_path / "out"
    for i in range(3):  # three files: the stream reads them as micro-batches
        part = [row for row in labels if row[1] % 3 == i]
        spark.createDataFrame(part, "k int, t int, label string").write.mode("append") \
            .parquet(str(source))
    stream = (spark.readStream.schema("k int, t int, label string")
              .option("maxFilesPerTrigger", 1).parquet(str(source)))

    features.write.parquet(str(tmp_path / "features"))
    where = str(tmp_path / "features")

    def join(batch, batch_id):
        # On Spark Connect this runs in a session of its own, on the server: tables are
        # read there, not captured as DataFrames of the caller's session.
        table = batch.sparkSession.read.parquet(where)
        cj.asof_join(batch, table, on="t", by="k").write.mode("append").parquet(str(out))

    query = (stream.writeStream.foreachBatch(join).trigger(availableNow=True)
             .option("checkpointLocation", tempfile.mkdtemp(dir=tmp_path)).start())
    query.awaitTermination(120)
    got = spark.read.parquet(str(out))
    expected = cj.asof_join(spark.createDataFrame(labels, "k int, t int, label string"),
                            features, on="t", by="k")
    assert _sorted(got, expected.columns) == _sorted(expected, expected.columns)
    assert got.count() == len(labels)
