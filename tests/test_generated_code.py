"""Generated code is never edited by hand and matches proto/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_python_code_is_up_to_date():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_proto.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_proto_file_has_a_generated_module():
    protos = sorted(p.stem for p in (ROOT / "proto").rglob("*.proto"))
    generated = ROOT / "referee" / "proto" / "pusoy" / "referee" / "v1"
    for name in protos:
        assert (generated / f"{name}_pb2.py").exists(), name
