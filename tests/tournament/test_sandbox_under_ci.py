"""Under CI (``CI=true``) a sandbox test that cannot run fails instead of skipping: a
pytest run where probe() answers as on a machine that can make no jail shows it, with
and without CI."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")
SUPPORT = Path(__file__).resolve().parents[1] / "support"  # jailing, which conftest imports

INNER = f"""
import importlib.util

import jailing
import pytest

from referee.sandbox import Level, Support

spec = importlib.util.spec_from_file_location("sandbox_helpers", {str(CONFTEST)!r})
helpers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(helpers)

MISSING = ("missing programs: install the Debian packages bubblewrap",)


@pytest.fixture(autouse=True)
def no_jail_here(monkeypatch):
    # A machine that can make no jail: what probe() answers there.
    nothing = Support(Level.NONE, {{Level.FULL: MISSING, Level.LIGHT: MISSING}})
    monkeypatch.setattr(jailing, "probe", lambda: nothing)


def test_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    helpers.require_sandbox()


def test_elsewhere(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    helpers.require_sandbox()


def test_with_ci_off(monkeypatch):
    monkeypatch.setenv("CI", "false")
    helpers.require_sandbox()
"""


def test_a_sandbox_test_that_cannot_run_fails_under_ci_and_skips_elsewhere(tmp_path):
    (tmp_path / "test_inner.py").write_text(INNER, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    report = tmp_path / "report.xml"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"),
            *("-c", str(tmp_path / "pytest.ini"), f"--junitxml={report}", "test_inner.py"),
        ],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(SUPPORT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # a test failed
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        (child,) = [c for c in case if c.tag in ("failure", "skipped", "error")] or [None]
        outcomes[case.get("name")] = (
            (child.tag, child.get("message", "")) if child is not None else ("passed", "")
        )
    missing = "this machine cannot make a full jail for bots: full jail: missing programs"
    failed, why = outcomes["test_under_ci"]
    assert failed == "failure"
    assert why.startswith(f"Failed: CI=true: a sandbox test may not skip, and {missing}"), why
    for name in ("test_elsewhere", "test_with_ci_off"):
        skipped, why = outcomes[name]
        assert skipped == "skipped" and why.startswith(missing), (name, why)
