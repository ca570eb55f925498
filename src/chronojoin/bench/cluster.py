"""A real Spark standalone cluster on 127.0.0.1, started from the pyspark wheel.

One master and ``workers`` workers, each its own JVM launched with the wheel's
``bin/spark-class``, on explicit free ports of 127.0.0.1 only. :meth:`start` waits until
the master's UI (``/json/``) reports every worker ``ALIVE``; :meth:`stop` ends exactly
the processes it started, by pid. Use it as a context manager::

    with StandaloneCluster(workers=2) as cluster:
        spark = builder.master(cluster.master_url).config(map=cluster.session_conf())...
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from typing import IO, Any

HOST = "127.0.0.1"


def free_port(host: str = HOST) -> int:
    """Return a TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def spark_home() -> str:
    """Return the pyspark package directory (it holds ``bin/spark-class`` and ``jars/``)."""
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


@dataclass
class StandaloneCluster:
    """Master + workers on 127.0.0.1; ``stop()`` kills only its own pids."""

    workers: int = 2
    cores_per_worker: int = 1
    memory_per_worker: str = "2g"
    executor_memory: str = "1g"
    work_dir: str | None = None
    start_timeout_s: float = 90.0
    master_port: int = 0
    master_ui_port: int = 0
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)
    _logs: list[IO[bytes]] = field(default_factory=list, repr=False)
    _own_dir: bool = field(default=False, repr=False)

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:<port>``."""
        return f"spark://{HOST}:{self.master_port}"

    @property
    def ui_url(self) -> str:
        """The master's web UI."""
        return f"http://{HOST}:{self.master_ui_port}"

    @property
    def pids(self) -> list[int]:
        """Pids of the processes started (master first)."""
        return [p.pid for p in self._procs]

    def session_conf(self) -> dict[str, str]:
        """Spark confs for an application on this cluster: one executor per worker."""
        return {
            "spark.executor.cores": str(self.cores_per_worker),
            "spark.cores.max": str(self.cores_per_worker * self.workers),
            "spark.executor.memory": self.executor_memory,
            "spark.driver.host": HOST,
            "spark.driver.bindAddress": HOST,
        }

    def start(self) -> str:
        """Start the master and workers, wait until all are alive; return the master URL."""
        if self._procs:
            return self.master_url
        if self.work_dir is None:
            self.work_dir = tempfile.mkdtemp(prefix="chronojoin-cluster-")
            self._own_dir = True
        os.makedirs(self.work_dir, exist_ok=True)
        self.master_port = self.master_port or free_port()
        self.master_ui_port = self.master_ui_port or free_port()
        try:
            self._launch("master", [
                "org.apache.spark.deploy.master.Master", "--host", HOST,
                "--port", str(self.master_port), "--webui-port", str(self.master_ui_port),
            ])
            self._wait(lambda state: True, "master UI")
            for i in range(self.workers):
                worker_dir = os.path.join(self.work_dir, f"worker-{i}")
                os.makedirs(worker_dir, exist_ok=True)
                self._launch(f"worker-{i}", [
                    "org.apache.spark.deploy.worker.Worker", self.master_url, "--host", HOST,
                    "--port", str(free_port()), "--webui-port", str(free_port()),
                    "--cores", str(self.cores_per_worker), "--memory", self.memory_per_worker,
                    "--work-dir", worker_dir,
                ])
            self._wait(lambda state: _alive(state) >= self.workers, f"{self.workers} workers")
        except BaseException:
            self.stop()
            raise
        return self.master_url

    def stop(self, timeout_s: float = 20.0) -> None:
        """Terminate the started processes by pid (workers first), then the master."""
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + timeout_s
        for proc in reversed(self._procs):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._procs.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self._own_dir and self.work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            self.work_dir = None
            self._own_dir = False

    def state(self) -> dict[str, Any]:
        """Fetch the master's JSON status (workers, applications)."""
        with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as response:
            data: dict[str, Any] = json.load(response)
            return data

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _launch(self, name: str, args: list[str]) -> None:
        assert self.work_dir is not None
        home = spark_home()
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": home, "SPARK_LOCAL_IP": HOST, "SPARK_NO_DAEMONIZE": "1",
            "PYSPARK_PYTHON": env.get("PYSPARK_PYTHON", sys.executable),
            "SPARK_LOG_DIR": self.work_dir,
        })
        log = open(os.path.join(self.work_dir, f"{name}.log"), "wb")  # noqa: SIM115
        self._logs.append(log)
        cmd = [os.path.join(home, "bin", "spark-class"), *args]
        self._procs.append(
            subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.work_dir)
        )

    def _wait(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        last: Exception | None = None
        while time.monotonic() < deadline:
            dead = [p for p in self._procs if p.poll() is not None]
            if dead:
                msg = f"a cluster process exited (code {dead[0].returncode}); logs: {self.work_dir}"
                raise RuntimeError(msg)
            try:
                if ready(self.state()):
                    return
            except (OSError, ValueError) as exc:  # not up yet, or still serving a page
                last = exc
            time.sleep(0.5)
        msg = f"standalone cluster: no {what} after {self.start_timeout_s:.0f} s ({last})"
        raise TimeoutError(msg)


def _alive(state: dict[str, Any]) -> int:
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")
