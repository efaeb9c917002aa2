"""A tournament whose own referee serves mutual TLS: built-in bots in the tournament's
process, a gRPC bot process (through PUSOY_TLS_CA, PUSOY_TLS_CERT, PUSOY_TLS_KEY) and a
stdio bot behind the bridge all show certificates of the tournament's CA, and every log
is signed by the tournament's own key."""

from __future__ import annotations

import base64
import stat

from referee.log.verify import verify_log
from referee.tournament.director import Tournament
from referee.tournament.toml_reader import load_config

from ..server.certs import TestCA
from .conftest import EXAMPLES, bot_entry, example_bot, read_results, write_config


async def test_a_tournament_over_mutual_tls_signs_its_logs_with_its_own_key(tmp_path):
    ca = TestCA(tmp_path / "pki")
    server, client = ca.server(), ca.client()
    bots = [
        bot_entry("greedy", builtin="greedy"),
        bot_entry("random", builtin="random"),
        bot_entry("greedy-proc", **example_bot("greedy_bot.py")),
        bot_entry("stdio-proc", stdio=f"{{python}} {EXAMPLES / 'stdio_bot.py'}"),
    ]
    path = write_config(
        tmp_path,
        bots,
        tournament={"format": "fixed", "seatings": "none", "rounds": 2},
        referee={
            "tls_cert": str(server.cert),
            "tls_key": str(server.key),
            "tls_client_ca": str(ca.path),
            "ca_file": str(ca.path),
            "client_cert": str(client.cert),
            "client_key": str(client.key),
        },
    )
    summary = await Tournament(load_config(path)).run()
    assert (summary.done, summary.failed) == (2, 0)
    out = tmp_path / "out"
    results = read_results(out)
    assert all(r["status"] == "finished" for r in results)
    assert all(s["connected"] and not s["crashed"] for r in results for s in r["seats"])
    public = (out / "signing-key.pub").read_text().strip()
    state = out / "state"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert (state / "signing-key.pem").exists() and not list((out / "logs").glob("*.pem"))
    for r in results:
        assert r["signed_by"] == public and len(r["final_hash"]) == 64
        report = verify_log(out / r["log"], base64.b64decode(public))
        assert report.ok and report.key_checked, report.summary()
