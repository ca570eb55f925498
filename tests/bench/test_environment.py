"""The environment fingerprint's git fields, read from a real repository."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from chronojoin.bench.environment import environment, git_commit, git_modified

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(path, *args):
    subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)


def test_commit_and_modified_follow_the_working_tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # git must not find a repository above the temporary directory.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert git_commit() is None and git_modified() is None  # not a repository
    _git(tmp_path, "init", "-q")
    tracked = tmp_path / "tracked.txt"
    tracked.write_text("one\n")
    _git(tmp_path, "add", "tracked.txt")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.com",
         "commit", "-q", "-m", "first")
    assert git_commit() is not None and len(git_commit() or "") == 40
    assert git_modified() is False
    (tmp_path / "untracked.txt").write_text("new\n")
    assert git_modified() is False  # untracked files do not change what was timed
    tracked.write_text("two\n")
    assert git_modified() is True
    env = environment(None)
    assert env["git_modified"] is True and env["git_commit"] == git_commit()
