"""The pool's table: a slice of ``bench/pool_table.py`` (one deal, without the slow
search) through the tournament director, and docs/benchmark.md showing the frozen
ratings."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from referee_cli import ROOT, run_referee

from referee.benchmark.pool import load_pool
from referee.benchmark.table import BEGIN, END, replace_between_markers


def test_a_slice_of_the_pool_table_is_played_and_tabled(tmp_path: Path):
    import subprocess

    out = tmp_path / "table"
    proc = subprocess.run(
        [
            sys.executable,
            "bench/pool_table.py",
            "--deals",
            "1",
            "--leave-out",
            "search",
            "--no-docs",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    numbers = json.loads((out / "pool-table.json").read_text())
    assert numbers["deals"] == 1 and numbers["groups"] == 1
    assert numbers["ratings"]["random"] == 0
    assert set(numbers["pairs"]) >= {"random vs greedy", "greedy vs expert"}
    assert "| **expert** |" in proc.stdout
    verified = run_referee("verify", "--tournament", str(out))
    assert verified.returncode == 0, verified.stdout


def test_the_docs_show_the_frozen_ratings():
    pool = load_pool()
    text = (ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8")
    table = text[text.index(BEGIN) : text.index(END)]
    for anchor in pool.anchors:
        row = re.search(rf"\| \*\*{anchor.name}\*\* \| (-?\d+) \|", table)
        assert row is not None, anchor.name
        assert int(row.group(1)) == round(anchor.rating)
    assert replace_between_markers(f"a{BEGIN}old{END}b", "new") == f"a{BEGIN}\nnew\n{END}b"
