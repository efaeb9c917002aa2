"""Two referees starting at once in one state folder share one key and one token."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from referee.log.signing import LogSigner
from referee.server.auth import load_or_create_token


def _key(folder: str) -> str:
    return LogSigner.load_or_create(Path(folder) / "signing-key.pem")[0].public_key_text


def _token(folder: str) -> str:
    return load_or_create_token(Path(folder) / "organiser-token")[0]


def test_processes_creating_the_key_and_token_at_once_agree(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        for round_ in range(3):
            folder = tmp_path / str(round_)
            folder.mkdir()
            assert len(set(pool.map(_key, [str(folder)] * 8))) == 1
            assert len(set(pool.map(_token, [str(folder)] * 8))) == 1
            # Nothing but the two files is left behind.
            assert sorted(p.name for p in folder.iterdir()) == [
                "organiser-token",
                "signing-key.pem",
            ]
