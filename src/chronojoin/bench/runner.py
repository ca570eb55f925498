"""Runs benchmark cases: methods x repetitions, interleaved, timed, checked, measured.

For each case the runner loads the inputs once, then

1. checks the answers: every method with ``checked=True`` computes
   :func:`chronojoin.bench.case.checksum` of its result, or the case's own
   ``checksum_plan`` (untimed; this also warms the JVM up). The most common
   ``(rows, checksum)`` is the reference; on a tie, the baseline's answer if it is among
   the tied ones, else there is no reference and the tied methods are recorded as
   ``"disagree"``. A method that differs from the reference is recorded as ``"wrong"``.
   Neither is timed, so a fast wrong answer cannot win. A local method returning
   ``checksum=None`` is checked on its row count only. Every record of a checked method
   says what its check was worth (``check``, see :func:`verdicts`): with one checked
   method the answer is compared with nothing (``"none"``).
2. times ``repetitions`` rounds; in round ``r`` the method order is rotated by ``r``
   so that machine noise and warm caches hit all methods alike. A Spark method is forced
   with ``df.write.format("noop").mode("overwrite").save()``; its jobs are tagged
   (``SparkSession.addTag``) to read their metrics from the UI's REST API.

The cases of one :meth:`Runner.run` share their rounds: every case is loaded and
checked first, then round ``r`` times each case in turn (their order rotated by ``r``
too). A ratio between two cases (a skewed layout against the same size unskewed, a
band join ten times larger) thus compares timings taken in the same rounds, not one
case's rounds against another's taken after them, while the machine's speed drifts.

A method that exceeds its timeout is interrupted (``interruptTag``; on classic sessions,
where tags are thread-local, ``interruptAll``: the runner runs one operation at a time),
recorded as ``"timeout"`` and not run again for that case. A local method runs in a
worker thread: its Spark jobs carry a tag of their own and its DuckDB query (run by
:func:`chronojoin.bench.data.duckdb_row`) is interrupted too; the runner waits for the
worker to end (at most ``stop_wait_s``) before the next method, and records a worker
still running then as ``abandoned``.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import pkgutil
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

from chronojoin.bench import cases as cases_package
from chronojoin.bench import metrics as M
from chronojoin.bench.case import Case, Method, checksum
from chronojoin.bench.data import interrupt_duckdb

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from chronojoin.bench.progress import Progress

Sink = Callable[[dict[str, Any]], None]
_tags = itertools.count()


class TimedOut(Exception):
    """A method ran past its timeout and was interrupted (``abandoned``: it did not stop)."""

    def __init__(self, name: str, *, abandoned: bool = False) -> None:
        super().__init__(name)
        self.abandoned = abandoned


def family_variants(family: str) -> tuple[str, ...]:
    """The variants a family's cases take (its module's ``VARIANTS``; none for most)."""
    return tuple(getattr(_family_module(family), "VARIANTS", ()))


def family_cases(family: str, **params: Any) -> list[Case]:
    """``chronojoin.bench.cases.<family>.cases(**params)``, passing only accepted params.

    ``variants`` may name the variants of several families: a family gets its own and
    the names no family has (which it rejects), and no case when that leaves none; a
    family without variants ignores them.
    """
    module = _family_module(family)
    own = family_variants(family)
    if params.get("variants") and own:
        others = set(known_variants()) - set(own)
        mine = [v for v in params["variants"] if v not in others]
        if not mine:
            return []
        params = {**params, "variants": mine}
    factory = module.cases
    accepted = inspect.signature(factory).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        params = {k: v for k, v in params.items() if k in accepted}
    return list(factory(**params))


def available_families() -> list[str]:
    """Case modules present in :mod:`chronojoin.bench.cases`."""
    return sorted(m.name for m in pkgutil.iter_modules(cases_package.__path__))


def known_variants(families: Sequence[str] | None = None) -> list[str]:
    """Every variant of ``families`` (default: all families), in order, once."""
    names: list[str] = []
    for family in families or available_families():
        names += [v for v in family_variants(family) if v not in names]
    return names


def _family_module(family: str) -> Any:
    try:
        return import_module(f"chronojoin.bench.cases.{family}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith(f"cases.{family}"):
            msg = f"no benchmark cases for {family!r} (module chronojoin.bench.cases.{family})"
            raise ValueError(msg) from exc
        raise


@dataclass
class _Prepared:
    """A case between its check and its timed rounds, with the records it produced."""

    case: Case
    family: str
    chosen: list[Method]
    inputs: Any = None
    loaded: bool = False
    excluded: set[str] = field(default_factory=set)
    answers: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Runner:
    """Runs cases in one session and sends one record per run to ``sink``."""

    spark: SparkSession
    sink: Sink
    repetitions: int = 3
    methods: Sequence[str] | None = None
    timeout_s: float | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    progress: Progress | None = None
    metrics_wait_s: float = 10.0
    stop_wait_s: float = 30.0

    def __post_init__(self) -> None:
        self.ui = M.ui_client(self.spark)

    def selected(self, case: Case) -> list[Method]:
        """Return the case's methods, filtered by ``methods`` (baselines always stay)."""
        if not self.methods:
            return list(case.methods)
        return [m for m in case.methods if m.name in self.methods or m.baseline]

    def steps(self, case: Case) -> int:
        """Progress steps of one case: one check per checked method plus the timed runs."""
        chosen = self.selected(case)
        return sum(m.checked for m in chosen) + len(chosen) * self.repetitions

    def run(self, cases: Sequence[Case], family: str = "") -> list[dict[str, Any]]:
        """Run every case, their rounds interleaved; return the records (also sent to ``sink``).

        The records come back case by case, each case's in the order they were taken.
        """
        prepared = [self._prepare(case, family) for case in cases]
        ready = [p for p in prepared if p.loaded]
        for rep in range(self.repetitions):
            for p in _rotated(ready, rep):
                self._round(p, rep)
        return [rec for p in prepared for rec in p.records]

    def _prepare(self, case: Case, family: str) -> _Prepared:
        """Load a case's inputs and check its answers (a failed load is recorded)."""
        p = _Prepared(case, family, self.selected(case))
        self._show(f"{case.name}: loading inputs", 0)
        try:
            inputs = case.load(self.spark)
        except Exception as exc:
            for m in p.chosen:
                self._emit(p, m, status="error", error=f"load: {_one_line(exc)}")
            if self.progress is not None:
                self.progress.done += self.steps(case)
            return p
        p.inputs, p.loaded = inputs, True
        p.excluded, p.answers, p.checks = self._check(p)
        return p

    def _round(self, p: _Prepared, rep: int) -> None:
        """Time each method of a prepared case once, in round ``rep``'s rotated order."""
        for m in _rotated(p.chosen, rep):
            if m.name in p.excluded:
                self._show(f"{p.case.name} {m.name}: skipped")
                continue
            self._show(f"{p.case.name} {m.name} rep {rep + 1}/{self.repetitions}")
            status, fields = self._timed(m, p.inputs, p.answers.get(m.name))
            self._emit(p, m, repetition=rep, status=status, **fields)
            if status != "ok":
                p.excluded.add(m.name)

    def _emit(self, p: _Prepared, method: Method, **fields: Any) -> None:
        fields.setdefault("check", p.checks.get(method.name))
        rec = self._record(p.family, p.case, method, **fields)
        p.records.append(rec)
        self.sink(rec)

    # -- answer check -------------------------------------------------------------------

    def _check(
        self, p: _Prepared
    ) -> tuple[set[str], dict[str, tuple[int, str | None]], dict[str, str]]:
        """Check the answers of a case's methods: the methods excluded, answers, verdicts."""
        answers: dict[str, tuple[int, str | None]] = {}
        excluded: set[str] = set()
        for m in (m for m in p.chosen if m.checked):
            self._show(f"{p.case.name} {m.name}: checking the answer")
            try:
                answers[m.name] = self._answer(m, p.inputs, p.case)
            except TimedOut as exc:
                self._emit(p, m, status="timeout", phase="check",
                           **_timeout_fields(self._limit(m), exc))
                excluded.add(m.name)
            except Exception as exc:
                self._emit(p, m, status="error", phase="check", error=_one_line(exc))
                excluded.add(m.name)
        baselines = {m.name for m in p.chosen if m.baseline}
        checks, reference = verdicts(answers, baselines)
        if len(answers) == 1:
            self._show(f"{p.case.name}: answer of {next(iter(answers))} compared with none", 0)
        for name, (rows, digest) in answers.items():
            if checks[name] in ("wrong", "disagree"):
                m = next(x for x in p.chosen if x.name == name)
                self._emit(
                    p, m, status=checks[name], phase="check", check=checks[name], rows=rows,
                    checksum=digest, expected_rows=reference[0] if reference else None,
                    expected_checksum=reference[1] if reference else None,
                )
                excluded.add(name)
        return excluded, answers, checks

    def _answer(self, m: Method, inputs: Any, case: Case) -> tuple[int, str | None]:
        if m.local:
            rows, digest = self._with_timeout_local(m, inputs)
            return int(rows), None if digest is None else str(digest)
        with self._session_conf(m.spark_conf), self._tagged(m):
            df = m.build(inputs)
            plan = (case.checksum_plan(df) if case.checksum_plan is not None
                    else checksum(df, case.checksum_columns))
            row = plan.collect()[0]
        return int(row["rows"]), None if row["checksum"] is None else str(row["checksum"])

    # -- timed runs ---------------------------------------------------------------------

    def _timed(self, m: Method, inputs: Any,
               answer: tuple[int, str | None] | None) -> tuple[str, dict[str, Any]]:
        fields: dict[str, Any] = {"rows": answer[0] if answer else None}
        try:
            if m.local:
                start = time.perf_counter()
                rows, _ = self._with_timeout_local(m, inputs)
                fields["elapsed_s"] = time.perf_counter() - start
                fields["rows"] = int(rows)
                fields["metrics"] = M.empty()
                return "ok", fields
            with self._session_conf(m.spark_conf), self._tagged(m) as tag:
                start = time.perf_counter()
                m.build(inputs).write.format("noop").mode("overwrite").save()
                fields["elapsed_s"] = time.perf_counter() - start
            fields["metrics"] = M.collect(self.ui, tag, wait_s=self.metrics_wait_s)
            return "ok", fields
        except TimedOut as exc:
            return "timeout", {**fields, **_timeout_fields(self._limit(m), exc)}
        except Exception as exc:
            return "error", {**fields, "error": _one_line(exc)}

    def _limit(self, m: Method) -> float | None:
        limits = [x for x in (m.timeout_s, self.timeout_s) if x is not None]
        return min(limits) if limits else None

    @contextlib.contextmanager
    def _tagged(self, m: Method) -> Iterator[str]:
        """Tag the jobs of the block; interrupt them after the method's time limit."""
        tag = _new_tag()
        limit = self._limit(m)
        fired = threading.Event()

        def interrupt() -> None:
            fired.set()
            self._interrupt(tag)

        timer = threading.Timer(limit, interrupt) if limit else None
        self.spark.addTag(tag)
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            yield tag
        except Exception as exc:
            if fired.is_set():
                raise TimedOut(tag) from exc
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self.spark.removeTag(tag)
        if fired.is_set():  # interrupted just as it finished: not a valid time
            raise TimedOut(tag)

    def _interrupt(self, tag: str) -> None:
        with contextlib.suppress(Exception):
            if not self.spark.interruptTag(tag):
                self.spark.interruptAll()

    def _with_timeout_local(self, m: Method, inputs: Any) -> tuple[Any, Any]:
        """Run a local method in a worker thread; stop it once past its time limit.

        The worker tags its Spark jobs (tags are per thread); on time-out they are
        interrupted, and so is a DuckDB query the worker runs. The worker is waited for,
        at most ``stop_wait_s``, so that it does not run on while the next method is
        timed; still running then, it is reported as abandoned.
        """
        box: dict[str, Any] = {}
        tag = _new_tag()

        def target() -> None:
            try:
                self.spark.addTag(tag)
                box["value"] = m.build(inputs)
            except BaseException as exc:
                box["error"] = exc
            finally:
                with contextlib.suppress(Exception):
                    self.spark.removeTag(tag)

        worker = threading.Thread(target=target, daemon=True, name=f"cjbench-{m.name}")
        worker.start()
        worker.join(self._limit(m))
        if worker.is_alive():
            self._interrupt(tag)
            interrupt_duckdb(worker.ident)
            worker.join(self.stop_wait_s)
            raise TimedOut(m.name, abandoned=worker.is_alive())
        if "error" in box:
            raise box["error"]
        rows, digest = box["value"]
        return rows, digest

    @contextlib.contextmanager
    def _session_conf(self, conf: Mapping[str, str]) -> Iterator[None]:
        """Set ``conf`` for the block and restore the previous values."""
        previous: dict[str, str | None] = {}
        for key, value in conf.items():
            previous[key] = self.spark.conf.get(key, None)
            self.spark.conf.set(key, value)
        try:
            yield
        finally:
            for key, old in previous.items():
                if old is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, old)

    # -- records ------------------------------------------------------------------------

    def _record(self, family: str, case: Case, m: Method, **fields: Any) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "kind": "result", "family": family, "case": case.name,
            "params": dict(case.params), "method": m.name, "baseline": m.baseline,
            "checked": m.checked, "local": m.local, "repetition": None,
            "elapsed_s": None, "metrics": M.empty(), "error": None,
        }
        rec.update(self.context)
        rec.update(fields)
        return rec

    def _show(self, label: str, advance: int = 1) -> None:
        if self.progress is not None:
            self.progress.step(label, advance)


def _new_tag() -> str:
    return f"cjbench-{next(_tags)}-{int(time.time() * 1000)}"


def _timeout_fields(limit: float | None, exc: TimedOut) -> dict[str, Any]:
    if not exc.abandoned:
        return {"error": f"over {limit} s"}
    return {"error": f"over {limit} s; abandoned: still running when the next method started",
            "abandoned": True}


def verdicts(
    answers: Mapping[str, tuple[int, str | None]], baselines: Collection[str] = ()
) -> tuple[dict[str, str], tuple[int, str | None] | None]:
    """What each checked method's answer check found, and the reference answer.

    ``answers`` maps a method to its ``(rows, checksum)`` (``checksum=None``: row count
    only). The reference is the most common full answer (else the most common row
    count); on a tie, the answer of a method in ``baselines`` if it is among the tied
    ones, else there is none. Per method: ``"compared"`` (the same rows and checksum as
    another method's), ``"rows"`` (the same row count as another's, no checksum on one
    side), ``"none"`` (no other answer to compare with), ``"wrong"`` (differs from the
    reference), ``"disagree"`` (tied with another answer and no baseline to decide),
    ``"baseline"`` (the baseline's answer, kept as the reference though no other agreed).
    """
    if len(answers) < 2:
        return dict.fromkeys(answers, "none"), next(iter(answers.values()), None)
    reference = _reference(answers, baselines)
    if reference is None:
        return dict.fromkeys(answers, "disagree"), None
    out: dict[str, str] = {}
    for name, (rows, digest) in answers.items():
        if not _agrees((rows, digest), reference):
            out[name] = "wrong"
            continue
        peers = [a for n, a in answers.items()
                 if n != name and _agrees(a, (rows, digest)) and _agrees(a, reference)]
        if not peers:
            out[name] = "baseline"
        elif digest is not None and any(a[1] is not None for a in peers):
            out[name] = "compared"
        else:
            out[name] = "rows"
    return out, reference


def _agrees(answer: tuple[int, str | None], other: tuple[int, str | None]) -> bool:
    """Same row count, and the same checksum where both have one."""
    return answer[0] == other[0] and (
        answer[1] is None or other[1] is None or answer[1] == other[1])


def _rotated(items: list[Any], rep: int) -> list[Any]:
    """``items`` rotated left by ``rep``: round ``rep``'s order of cases or methods."""
    shift = rep % max(len(items), 1)
    return items[shift:] + items[:shift]


def _reference(
    answers: Mapping[str, tuple[int, str | None]], baselines: Collection[str]
) -> tuple[int, str | None] | None:
    """The answer most others agree with; a tie goes to the baseline's, else to none.

    The candidates are the full answers, and the row counts that agree with none of them.
    """
    full = list(dict.fromkeys(a for a in answers.values() if a[1] is not None))
    loose = [(a[0], None) for a in answers.values()
             if a[1] is None and not any(_agrees(a, f) for f in full)]
    candidates: list[tuple[int, str | None]] = full + list(dict.fromkeys(loose))
    support = [sum(_agrees(a, c) for a in answers.values()) for c in candidates]
    top = [c for c, n in zip(candidates, support, strict=True) if n == max(support)]
    if len(top) > 1:
        decided = [answers[n] for n in baselines if n in answers]
        top = [c for c in top if any(_agrees(a, c) for a in decided)]
    return top[0] if len(top) == 1 else None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:500]
