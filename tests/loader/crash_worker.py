"""Run one ``append`` in its own process so that a test can kill it at any moment.

Usage: ``python crash_worker.py TABLE [DIE_AFTER_MOVES]``. The worker starts Spark and
prints ``UP``, then waits for a batch path on standard input (so that a test can start
the next worker while it checks the last one), prints ``READY`` once the batch is opened
and ``DONE`` after the append. It touches the table only after it got the path. With
``DIE_AFTER_MOVES=n`` the process SIGKILLs itself after publishing ``n`` files (a crash
between the commit point and the end of publishing). End of input without a path: the
worker exits.
"""

from __future__ import annotations

import os
import signal
import sys

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def main() -> None:

    table = sys.argv[1]
    die_after = int(sys.argv[2]) if len(sys.argv) > 2 else -1
    from tests.servers import short_lived_builder

    spark = short_lived_builder("chronojoin-crash-worker").getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    from chronojoin import IncrementalLoader
    from chronojoin.loader import commit

    if die_after >= 0:
        real_move, calls = commit.move, [0]

        def dying_move(src: str, dst: str) -> bool:
            if calls[0] >= die_after:
                os.kill(os.getpid(), signal.SIGKILL)
            calls[0] += 1
            return real_move(src, dst)

        commit.move = dying_move  # type: ignore[assignment]
    print("UP", flush=True)
    batch_path = sys.stdin.readline().strip()
    if not batch_path:
        os._exit(0)
    batch = spark.read.parquet(batch_path)
    loader = IncrementalLoader(spark, path=table, keys=["user_id", "click_id"],
                               partition_by="event_date", order_by="seq")
    print("READY", flush=True)
    loader.append(batch)
    print("DONE", flush=True)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
