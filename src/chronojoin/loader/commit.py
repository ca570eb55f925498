"""The commit protocol of one ``append``: stage, commit, publish, recover.

Every batch has a *batch id*: a hash of its content (schema, row count, two
order-independent row-hash sums), of the loader's keys, partition column, ``order_by``
and duplicate policy, so the same ``append`` re-run after a crash has the same id.
A caller may pass its own id; a re-used id whose content differs is refused.

Protocol (local file systems, one writer at a time under the table lock):

1. **Stage.** Spark writes the new rows and their index entries below
   ``_chronojoin/staging/<batch_id>-<attempt>/{data,index}``, a directory of this
   attempt's own (a killed attempt's Spark job may still be writing into its own).
   Nothing below the table's partition directories changes; a kill here leaves only
   staging files.
2. **Commit.** The staged files and their directories are fsynced. A manifest listing
   every staged file and its final name (data files
   ``<pcol>=<v>/part-cj-<batch_id>-<n>...``, index files
   ``_chronojoin/index/<pcol>=<v>/cj-<batch_id>-<n>-d<k>.parquet``, ``k`` the batch's
   data files in that partition) and the load's report is written to a temporary file,
   fsynced, and renamed to ``_commit.json`` in the attempt's staging directory
   (``os.replace`` is atomic). This rename is the commit point.
3. **Publish.** Each staged file is renamed to its final name (idempotent: a missing
   source whose destination exists was moved before), the directories are fsynced,
   metastore partitions are registered (``ALTER TABLE ... ADD IF NOT EXISTS``), the
   manifest is copied atomically to ``_chronojoin/commits/<batch_id>.json`` (the
   batch's permanent record) and the staging directory is removed.
4. **Recover** (every time a writer takes the lock): a staging directory with a
   ``_commit.json`` is rolled forward (step 3 again); one without is rolled back
   (deleted), as is one of a batch already recorded in ``commits/`` (a kill stopped
   the removal of its staging directory). A batch id with a record in ``commits/`` is
   skipped by ``append``.

Readers of the table (``spark.read.parquet(path)``, the metastore table) see data files
only after the commit point, each file complete (a rename is atomic); a batch whose
publish was interrupted may be partly visible until the next writer rolls it forward.
The key index is only ever read for keys of committed batches: its files are published
by the same manifest. Object stores (S3, GCS, ABFS) have no atomic rename and need a
different commit (e.g. a table format's log); only local paths are supported here.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from typing import Any

from chronojoin.errors import LoaderError
from chronojoin.loader.layout import (
    META,
    atomic_write_json,
    fsync_dir,
    fsync_path,
    list_visible,
    move,
    read_json,
    walk_files,
)

COMMIT_FILE = "_commit.json"
#: called with the partition directory names a published batch added files to
OnPartitions = Callable[[list[str]], None]


def meta_dir(root: str) -> str:
    """Return the loader's metadata directory of a table root."""
    return os.path.join(root, META)


def staging_dir(root: str, batch_id: str) -> str:
    """Where a batch was staged by releases that gave every attempt the same directory."""
    return os.path.join(meta_dir(root), "staging", batch_id)


def new_staging_dir(root: str, batch_id: str) -> str:
    """A directory of its own for one attempt to load a batch.

    An attempt killed on the client may leave its Spark job running (a Spark Connect
    server, a driver that outlives its Python process); a retry in the same directory
    would find that job's files among its own and publish them too.
    """
    return os.path.join(meta_dir(root), "staging", f"{batch_id}-{secrets.token_hex(6)}")


def _stage_of(root: str, manifest: dict[str, Any]) -> str:
    """The staging directory of a manifest's attempt."""
    if "staging" in manifest:
        return os.path.join(root, manifest["staging"])
    return staging_dir(root, manifest["batch_id"])


def record_path(root: str, batch_id: str) -> str:
    """Return the permanent record of a published batch."""
    return os.path.join(meta_dir(root), "commits", f"{batch_id}.json")


def committed(root: str, batch_id: str) -> dict[str, Any] | None:
    """Return the manifest of a committed batch (published or not), else ``None``."""
    found = read_json(record_path(root, batch_id))
    base = os.path.join(meta_dir(root), "staging")
    for name in list_visible(base) if found is None else []:
        if name == batch_id or name.startswith(f"{batch_id}-"):
            found = found or read_json(os.path.join(base, name, COMMIT_FILE))
    return found


def plan_moves(root: str, batch_id: str, stage: str) -> tuple[list[list[str]], list[str]]:
    """Return the final names of the files in ``stage``: ``([[src, dst], ...], pdirs)``.

    ``pdirs``: the partition directories the batch adds data files to. Paths are
    relative to ``root`` so that a table can be moved as a whole.
    """
    moves: list[list[str]] = []
    partitions: set[str] = set()
    counted: dict[str, dict[str, int]] = {}
    for kind in ("data", "index"):
        base = os.path.join(stage, kind)
        counters = counted.setdefault(kind, {})
        for rel in walk_files(base):
            pdir, name = os.path.split(rel)
            if not pdir or os.sep in pdir:
                continue  # Spark writes only <pcol>=<v>/part-... below a partitioned output
            n = counters.get(pdir, 0)
            counters[pdir] = n + 1
            src = os.path.relpath(os.path.join(base, rel), root)
            if kind == "data":
                suffix = name[name.index("."):] if "." in name else ""
                dst = os.path.join(pdir, f"part-cj-{batch_id}-{n:05d}{suffix}")
                partitions.add(pdir)
            else:
                # the batch's data file count in the partition, which tells a deleted
                # data file (see chronojoin.loader.index.complete)
                files = counted["data"].get(pdir, 0)
                dst = os.path.join(META, "index", pdir, f"cj-{batch_id}-{n:05d}-d{files}.parquet")
            moves.append([src, dst])
    return moves, sorted(partitions)


def commit(root: str, manifest: dict[str, Any]) -> None:
    """The commit point: flush the staged files, then publish the manifest atomically.

    The manifest goes into the attempt's staging directory. Spark does not flush the
    files it writes: without this, a machine that stops right after the commit (a power
    loss) could come back with the batch recorded and its files empty.
    """
    stage = _stage_of(root, manifest)
    sources = [os.path.join(root, src) for src, _ in manifest["moves"]]
    for path in sources:
        fsync_path(path)
    # every directory Spark created below the stage, whose entries in their parents a
    # power loss could otherwise drop while the manifest survives
    directories = set()
    for path in sources:
        directory = os.path.dirname(path)
        while directory.startswith(stage + os.sep):
            directories.add(directory)
            directory = os.path.dirname(directory)
    for directory in sorted(directories, reverse=True):
        fsync_dir(directory)
    atomic_write_json(os.path.join(stage, COMMIT_FILE), manifest)


def publish(root: str, manifest: dict[str, Any], on_partitions: OnPartitions | None) -> None:
    """Roll a committed batch forward (idempotent) and record it."""
    touched: set[str] = set()
    for src, dst in manifest["moves"]:
        if not move(os.path.join(root, src), os.path.join(root, dst)):
            msg = (f"batch {manifest['batch_id']}: staged file {src} and its published copy "
                   f"{dst} are both missing; the table under {root} was changed by hand")
            raise LoaderError(msg)
        touched.add(os.path.dirname(os.path.join(root, dst)))
    for directory in sorted(touched):
        fsync_dir(directory)
    if on_partitions is not None and manifest["partitions"]:
        on_partitions(list(manifest["partitions"]))
    atomic_write_json(record_path(root, manifest["batch_id"]), manifest)
    shutil.rmtree(_stage_of(root, manifest), ignore_errors=True)


def recover(root: str, on_partitions: OnPartitions | None) -> list[str]:
    """Roll forward committed batches, roll back the rest; return rolled-forward ids."""
    base = os.path.join(meta_dir(root), "staging")
    rolled = []
    for batch_id in list_visible(base):
        manifest = read_json(os.path.join(base, batch_id, COMMIT_FILE))
        # A recorded batch was published in full: its staging directory is what a kill
        # left of its removal, and publishing it again could bring back files deleted
        # since (retention) or fail on them.
        if manifest is None or os.path.exists(record_path(root, manifest["batch_id"])):
            shutil.rmtree(os.path.join(base, batch_id), ignore_errors=True)
        else:
            publish(root, manifest, on_partitions)
            rolled.append(batch_id)
    commits = os.path.join(meta_dir(root), "commits")
    for name in os.listdir(commits) if os.path.isdir(commits) else []:
        if ".tmp-" in name:
            os.unlink(os.path.join(commits, name))
    return rolled
