"""Matches over TLS and mutual TLS, with certificates from a real CA made by the test
(no check turned off): in-process bots, bot processes and `referee serve`."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from referee_cli import run_referee

from referee.bots import GreedyBot, RandomBot, play_seat
from referee.client.channels import client_channel, organiser_channel
from referee.client.tls import ClientTls
from referee.log.signing import load_public_key
from referee.log.verify import verify_log
from referee.protocol import common, match_service, match_service_grpc
from referee.server.app import RefereeServer
from referee.server.tls import ServerTls

from .certs import TestCA
from .conftest import log_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pki")
    ca = TestCA(folder / "ca")
    other = TestCA(folder / "other", name="another CA")
    server = ca.server()
    client = ca.client()
    stranger = other.client("stranger")
    return {
        "ca": ca.path,
        "server_cert": server.cert,
        "server_key": server.key,
        "client_cert": client.cert,
        "client_key": client.key,
        "other_cert": stranger.cert,
        "other_key": stranger.key,
    }


async def _play(server: RefereeServer, tls: ClientTls, seed: str) -> match_service.MatchInfo:
    async with server.organiser_channel(tls) as channel:
        stub = match_service_grpc.MatchServiceStub(channel)
        created = await stub.CreateMatch(
            match_service.CreateMatchRequest(profile="big-two", hands=2, seed=seed)
        )
        bots = [GreedyBot(), RandomBot(1), GreedyBot(), RandomBot(2)]
        outcomes = await asyncio.gather(
            *(
                play_seat(b, server.address, t, tls=tls)
                for b, t in zip(bots, created.seat_tokens, strict=True)
            )
        )
        assert all(o.ended is not None for o in outcomes)
        got = await stub.GetMatch(match_service.GetMatchRequest(match_id=created.match_id))
    return got.match


async def test_a_match_over_tls(tmp_path, pki):
    server = RefereeServer(
        "127.0.0.1:0", tmp_path / "logs", tls=ServerTls(pki["server_cert"], pki["server_key"])
    )
    await server.start()
    try:
        info = await _play(server, ClientTls(pki["ca"]), "over tls")
        assert info.status == common.MATCH_STATUS_FINISHED
        assert verify_log(log_path(server, info.match_id), server.signer.public_key).ok
        # A plaintext client gets nowhere, nor one that does not trust the CA.
        for channel in (
            grpc.aio.insecure_channel(server.address),
            grpc.aio.secure_channel(server.address, grpc.ssl_channel_credentials()),
        ):
            async with channel:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await match_service_grpc.MatchServiceStub(channel).GetServerInfo(
                        match_service.GetServerInfoRequest(), timeout=5
                    )
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop(grace=0.5)


async def test_a_match_over_mutual_tls_and_clients_without_a_good_certificate(tmp_path, pki):
    tls = ServerTls(pki["server_cert"], pki["server_key"], client_ca=pki["ca"])
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", tls=tls)
    await server.start()
    try:
        address = server.address
        good = ClientTls(pki["ca"], pki["client_cert"], pki["client_key"])
        info = await _play(server, good, "over mtls")
        assert info.status == common.MATCH_STATUS_FINISHED
        assert verify_log(log_path(server, info.match_id), server.signer.public_key).ok
        for bad in (
            ClientTls(pki["ca"]),  # no client certificate
            ClientTls(pki["ca"], pki["other_cert"], pki["other_key"]),  # another CA's
        ):
            async with organiser_channel(address, server.organiser_token, bad) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await match_service_grpc.MatchServiceStub(channel).ListMatches(
                        match_service.ListMatchesRequest(), timeout=5
                    )
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop(grace=0.5)


def _outward_address() -> str | None:
    """This machine's address on its route out (not loopback), or None when it has none.
    Connecting a UDP socket picks the route and sends nothing."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # TEST-NET-3: never a real peer
        except OSError:
            return None
        host: str = probe.getsockname()[0]
    return None if ipaddress.ip_address(host).is_loopback else host


async def test_with_tls_any_address_may_be_served(tmp_path, pki):
    # In plaintext 0.0.0.0 is refused without --insecure (test_auth); with TLS it is served,
    # on every interface, and only in TLS.
    tls = ServerTls(pki["server_cert"], pki["server_key"])
    server = RefereeServer("0.0.0.0:0", tmp_path / "logs", tls=tls)
    await server.start()
    try:
        assert server.port > 0 and server.address == f"0.0.0.0:{server.port}"
        outward = _outward_address()
        hosts = ["127.0.0.1", *([outward] if outward else [])]
        for host in hosts:
            address = f"{host}:{server.port}"
            # The certificate names localhost; the client checks it under that name.
            trusting = ClientTls(pki["ca"], server_name="localhost")
            async with client_channel(address, trusting) as channel:
                info = await match_service_grpc.MatchServiceStub(channel).GetServerInfo(
                    match_service.GetServerInfoRequest(), timeout=10
                )
            assert info.signing_public_key == server.signer.public_key_text, address
            async with grpc.aio.insecure_channel(address) as plain:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await match_service_grpc.MatchServiceStub(plain).GetServerInfo(
                        match_service.GetServerInfoRequest(), timeout=5
                    )
                assert err.value.code() == grpc.StatusCode.UNAVAILABLE, address
    finally:
        await server.stop(grace=0)


def test_referee_serve_over_mutual_tls_with_bot_processes(tmp_path, pki):
    """`referee serve --tls-*` and the Python kit's --tls-ca/--tls-cert/--tls-key."""
    state = tmp_path / "state"
    serve = subprocess.Popen(
        [
            *(sys.executable, "-m", "referee.cli", "serve", "--address", "localhost:0"),
            *("--log-dir", str(tmp_path / "logs"), "--state-dir", str(state)),
            *("--tls-cert", str(pki["server_cert"]), "--tls-key", str(pki["server_key"])),
            *("--tls-client-ca", str(pki["ca"]), "--log-level", "warning"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stdout is not None
        lines = [serve.stdout.readline() for _ in range(4)]
        assert lines[3].strip() == "TLS: mutual", lines
        address = lines[0].split()[3].rstrip(";")
        token = (state / "organiser-token").read_text().strip()
        tls = ClientTls(pki["ca"], pki["client_cert"], pki["client_key"])

        async def organise() -> str:
            async with organiser_channel(address, token, tls) as channel:
                stub = match_service_grpc.MatchServiceStub(channel)
                created = await stub.CreateMatch(
                    match_service.CreateMatchRequest(profile="pusoy-dos", hands=2, seed="kit")
                )
                flags = [
                    *("--tls-ca", str(pki["ca"]), "--tls-cert", str(pki["client_cert"])),
                    *("--tls-key", str(pki["client_key"])),
                ]
                procs = [
                    await asyncio.create_subprocess_exec(
                        sys.executable,
                        str(EXAMPLES / script),
                        *("--address", address, "--token", token_, *flags),
                        stdout=asyncio.subprocess.PIPE,
                        stderr=asyncio.subprocess.PIPE,
                    )
                    for script, token_ in zip(
                        ["greedy_bot.py", "random_bot.py"] * 2, created.seat_tokens, strict=True
                    )
                ]
                results = [await asyncio.wait_for(p.communicate(), 120) for p in procs]
                for p, (out, err) in zip(procs, results, strict=True):
                    assert p.returncode == 0, err.decode()
                    assert b"over, seat" in out
                return created.match_id

        match_id = asyncio.run(organise())

        # The organiser's command line over mutual TLS: the log, checked with the key.
        client = [
            *("--address", address, "--tls-ca", str(pki["ca"])),
            *("--tls-cert", str(pki["client_cert"]), "--tls-key", str(pki["client_key"])),
        ]
        fetched = run_referee(
            "organiser", "log", match_id, "-o", "got.jsonl", *client, cwd=tmp_path
        )
        assert fetched.returncode == 0 and "OK: " in fetched.stdout, fetched.stderr
        token_file = ("--token-file", str(state / "organiser-token"))
        listed = run_referee("organiser", "list", *client, *token_file, cwd=tmp_path)
        assert listed.returncode == 0 and match_id in listed.stdout, listed.stderr
        refused = run_referee(
            "organiser", "info", *client[:4], cwd=tmp_path
        )  # no client certificate
        assert refused.returncode == 2 and "cannot reach the referee" in refused.stderr

        # The image's health check, over mutual TLS (its settings from the environment).
        health = {
            "REFEREE_HEALTH_ADDRESS": address,
            "REFEREE_HEALTH_TLS_CA": str(pki["ca"]),
            "REFEREE_HEALTH_TLS_CERT": str(pki["client_cert"]),
            "REFEREE_HEALTH_TLS_KEY": str(pki["client_key"]),
        }
        assert healthcheck(health).returncode == 0
        del health["REFEREE_HEALTH_TLS_KEY"], health["REFEREE_HEALTH_TLS_CERT"]
        assert healthcheck(health).returncode == 1  # no client certificate: not healthy
        assert healthcheck({"REFEREE_HEALTH_ADDRESS": address}).returncode == 1  # plaintext
    finally:
        serve.terminate()
        serve.wait(30)
    key = load_public_key(state / "signing-key.pub")
    report = verify_log(tmp_path / "logs" / f"{match_id}.jsonl", key)
    assert report.ok and report.key_checked, report.summary()
    assert (tmp_path / "got.jsonl").read_bytes() == (
        tmp_path / "logs" / f"{match_id}.jsonl"
    ).read_bytes()


def healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "docker" / "healthcheck.py")],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
        check=False,
    )


def test_the_web_pages_are_not_served_off_loopback_in_plaintext_without_insecure(tmp_path):
    """`--http` has no TLS of its own: the same rule as the gRPC listeners."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0"),
            *("--log-dir", str(tmp_path / "logs"), "--state-dir", str(tmp_path / "state")),
            *("--http", "0.0.0.0:0"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "refusing to serve --http 0.0.0.0:0 in plaintext" in done.stderr
    assert "--insecure" in done.stderr


def test_metrics_are_not_served_off_loopback_in_plaintext_without_insecure(tmp_path):
    """`--metrics-address` has no TLS either: the rule of `--http`."""
    serve = [sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0"]
    serve += ["--log-dir", str(tmp_path / "logs"), "--state-dir", str(tmp_path / "state")]
    for address in ("0.0.0.0:0", "[::]:0"):
        done = subprocess.run(
            [*serve, "--metrics-address", address],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2
        assert f"refusing to serve --metrics-address {address} in plaintext" in done.stderr
    proc = subprocess.Popen(
        [*serve, "--metrics-address", "0.0.0.0:0", "--insecure"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert "referee listening on" in proc.stdout.readline()  # told: it serves
    finally:
        proc.terminate()
        proc.wait(30)
