"""The wheel builds with its metadata and works in a fresh virtual environment."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )
    return out


def test_wheel_and_sdist_metadata(dist):
    wheel = next(dist.glob("chronojoin-*.whl"))
    assert next(dist.glob("chronojoin-*.tar.gz"))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = z.read(info).decode()
        entry = z.read(info.replace("METADATA", "entry_points.txt")).decode()
    import chronojoin

    assert f"Version: {chronojoin.__version__}" in meta
    assert "License-Expression: Apache-2.0" in meta
    assert "Classifier: Typing :: Typed" in meta
    assert "Requires-Dist: pyspark==4.3.0" in meta
    assert "chronojoin/py.typed" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert "chronojoin = chronojoin.cli.main:run" in entry


def test_wheel_installs_and_demo_runs(dist, tmp_path):
    wheel = next(dist.glob("chronojoin-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
         str(wheel)],
        check=True, capture_output=True, timeout=300,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [str(env_dir / "bin" / "chronojoin"), "demo", "--ids", "300",
         "--strategies", "union", "--master", "local[1]"],
        cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "union" in run.stdout
    # the command ran the installed copy, not the source tree
    where = subprocess.run(
        [str(python), "-c", "import chronojoin; print(chronojoin.__file__)"],
        cwd=work, env=env, capture_output=True, text=True, check=True,
    ).stdout
    assert str(env_dir) in where
