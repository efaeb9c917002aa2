"""Two referees starting at once in one state folder share one key and one token."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_MAKE = """
import sys
from pathlib import Path
from referee.log.signing import LogSigner
from referee.server.auth import load_or_create_token
folder = Path(sys.argv[1])
key = LogSigner.load_or_create(folder / "signing-key.pem")[0].public_key_text
token = load_or_create_token(folder / "organiser-token")[0]
print(key, token)
"""


def test_processes_creating_the_key_and_token_at_once_agree(tmp_path: Path) -> None:
    for round_ in range(3):
        folder = tmp_path / str(round_)
        folder.mkdir()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _MAKE, str(folder)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(6)
        ]
        answers = set()
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            answers.add(out.strip())
        assert len(answers) == 1, answers  # one key and one token for all six
        # Nothing but the two files is left behind.
        assert sorted(p.name for p in folder.iterdir()) == ["organiser-token", "signing-key.pem"]
