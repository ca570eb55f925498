"""A whole benchmark run: families x masters, one session per master, raw results stored.

The session itself is built by the caller (the command line owns session building);
this module only needs a factory ``master -> SparkSession``.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from chronojoin._session import local_cores
from chronojoin.bench.environment import environment
from chronojoin.bench.progress import Progress
from chronojoin.bench.results import ResultsFile, session_label
from chronojoin.bench.runner import Runner, family_cases

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from chronojoin.bench.case import Case


def executors_of(master: str, cluster_executors: int | None = None) -> int | None:
    """Parallelism of a master: ``local[k]`` -> k, a cluster URL -> its executors."""
    local = local_cores(master)
    return cluster_executors if local is None else local


@dataclass
class Suite:
    """What to run: families, case parameters, methods, repetitions, time limit."""

    families: Sequence[str]
    case_params: dict[str, Any] = field(default_factory=dict)
    methods: Sequence[str] | None = None
    repetitions: int = 3
    timeout_s: float | None = None
    progress: bool = True
    metrics_wait_s: float = 10.0
    command: str | None = None

    def build_cases(self, family: str) -> list[Case]:
        """Build the cases of one family with this suite's parameters."""
        return family_cases(family, **self.case_params)

    def run(
        self,
        masters: Sequence[tuple[str, int | None]],
        make_session: Callable[[str], SparkSession],
        results: ResultsFile,
        *,
        stream: TextIO | None = None,
    ) -> list[dict[str, Any]]:
        """Run every family on every master; return all records (also appended)."""
        records: list[dict[str, Any]] = []
        for index, (master, executors) in enumerate(masters):
            spark = make_session(master)
            try:
                context = {"master": master, "executors": executors, "session": index}
                results.append({
                    "kind": "environment", **context,
                    "environment": environment(spark, executors=executors, command=self.command),
                })
                records.extend(self._run_master(spark, results, context, stream))
            finally:
                spark.stop()
        return records

    def _run_master(
        self, spark: SparkSession, results: ResultsFile, context: dict[str, Any],
        stream: TextIO | None,
    ) -> list[dict[str, Any]]:
        families = {f: self.build_cases(f) for f in self.families}
        runner = Runner(
            spark, results.append, repetitions=self.repetitions, methods=self.methods,
            timeout_s=self.timeout_s, context=context, metrics_wait_s=self.metrics_wait_s,
        )
        total = sum(runner.steps(c) for cs in families.values() for c in cs)
        runner.progress = Progress(total, stream=stream or sys.stderr, enabled=self.progress)
        out: list[dict[str, Any]] = []
        try:
            for family, family_case_list in families.items():
                out.extend(runner.run(family_case_list, family))
        finally:
            runner.progress.close()
        return out


def _reason(error: str, width: int = 80) -> str:
    """A failure's reason as the summary shows it: one line, the missing extra named."""
    text = error.splitlines()[0] if error else ""
    if "No module named" in text:
        text += " (pip install 'chronojoin[bench]')"
    return text if len(text) <= width else text[: width - 3] + "..."


#: How the summary names a weak answer check (see ``chronojoin.bench.runner.verdicts``).
_CHECKS = {"none": "compared with none", "rows": "row count only",
           "baseline": "baseline's answer, no other agreed"}


def summary(records: Sequence[dict[str, Any]]) -> str:
    """Format a plain-text table: median seconds per (session, case, method), and failures.

    A session is named by its master, and by its place in ``--masters`` too when one
    master ran twice (``local[2] (session 2)``): two sessions are never pooled.
    """
    groups: dict[tuple[Any, str, str, str], list[dict[str, Any]]] = {}
    for r in records:
        if r.get("kind") == "result":
            key = (r.get("session"), str(r.get("master")), str(r.get("case")),
                   str(r.get("method")))
            groups.setdefault(key, []).append(r)
    sessions: dict[str, set[Any]] = {}
    for session, master, _, _ in groups:
        sessions.setdefault(master, set()).add(session)
    lines = [f"{'master':<22} {'case':<40} {'method':<14} result"]
    for (session, name, case, method), rs in groups.items():
        several = len(sessions[name]) > 1 and isinstance(session, int)
        master = session_label(name, session, several)
        times = [r["elapsed_s"] for r in rs if r.get("status") == "ok"]
        failed = [r for r in rs if r.get("status") != "ok"]
        if times:
            text = f"{statistics.median(times):.3f} s (median of {len(times)})"
        else:
            text = failed[0].get("status", "?") if failed else "-"
        if failed and times:
            text += f", {failed[0].get('status')}"
        if failed and failed[0].get("error"):
            text += f": {_reason(str(failed[0]['error']))}"
        check = rs[-1].get("check")
        if check in ("none", "rows", "baseline"):
            text += f" [answer check: {_CHECKS[check]}]"
        lines.append(f"{master:<22} {case:<40} {method:<14} {text}")
    return "\n".join(lines)
