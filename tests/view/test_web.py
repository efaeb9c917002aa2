"""``referee serve --http`` over real sockets: pages, the public event stream, every bound."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import make_mocked_request
from referee_process import serve_argv

from pusoy_client import run_bot
from pusoy_client.samples import Misbehaving
from referee.server.app import RefereeServer
from referee.server.metrics import Metrics
from referee.web.access import OrganiserOnly
from referee.web.app import WebFront, WebLimits
from referee.web.common import last_event_id, listen_address
from referee.web.feed import PublicFeed, ViewerTooSlow
from tests.support.polls import until

from .conftest import ROOT, Paced, create_match


@pytest.fixture
async def stack(tmp_path) -> AsyncIterator[tuple[RefereeServer, WebFront]]:
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs")
    await server.start()
    limits = WebLimits(max_connections=6, max_viewers=2, max_viewers_per_match=1)
    web = WebFront(PublicFeed(server.registry), "127.0.0.1:0", limits)
    await web.start()
    try:
        yield server, web
    finally:
        await web.stop()
        await server.stop(grace=0.5)


async def sse(
    response: aiohttp.ClientResponse, *, clock: bool = False
) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) of a Server-Sent Events stream; the server's ``clock`` events
    only when asked for."""
    name, data = "message", ""
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if not line:
            if data and (clock or name != "clock"):
                yield name, data
            name, data = "message", ""
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]


async def test_pages_stream_and_bounds(stack):
    server, web = stack
    created = await create_match(
        server,
        profile="pusoy-dos",
        hands=1,
        seed="web",
        names=["a", "<b>b</b>", "c", "d"],
        connect_timeout_ms=60_000,
    )
    mid = created.match_id
    runner = server.registry.get(mid)
    assert runner is not None
    async with aiohttp.ClientSession(web.url) as http:
        async with http.get("/") as r:
            page = await r.text()
            assert r.status == 200 and mid in page and "waiting" in page
            assert "&lt;b&gt;b&lt;/b&gt;" in page and "<b>b</b>" not in page
            assert r.headers["X-Content-Type-Options"] == "nosniff"
        async with http.get("/api/matches") as r:
            (facts,) = (await r.json())["matches"]
            assert facts["match_id"] == mid and facts["status"] == "waiting"
            assert "log_path" not in json.dumps(facts)
        async with http.get(f"/matches/{mid}") as r:
            live = await r.text()
            assert r.status == 200 and '"events":"/matches/' in live
            assert "connect-src &#x27;self&#x27;" in live or "connect-src 'self'" in live
        async with http.get(f"/matches/{mid}/replay", allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == f"/matches/{mid}"
        for bad in ("/matches/nope", f"/matches/{mid}x/events", "/matches/..%2F..%2Fetc"):
            async with http.get(bad) as r:
                assert r.status == 404, bad
        async with http.post("/") as r:
            assert r.status == 405

        # The live stream: public ops only, from the start, then the end of the match.
        stream = await http.get(f"/matches/{mid}/events")
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        events = sse(stream)
        name, data = await anext(events)
        assert name == "message" and json.loads(data)["t"] == "match"
        # One viewer per match here: a second one is refused, politely.
        async with http.get(f"/matches/{mid}/events") as second:
            assert [e async for e in sse(second)] == [
                ("refused", "this match has as many live viewers as it takes; try again later")
            ]
        assert web.viewers[mid] == 1
        bots = [
            asyncio.create_task(run_bot(Misbehaving(Paced(0.01)), server.address, t))
            for t in created.seat_tokens
        ]
        ops = []
        async for _name, data in events:
            ops.append(json.loads(data))
        await asyncio.gather(*bots)
        stream.close()
        kinds = {op["t"] for op in ops}
        assert {"deal", "move", "hand_end", "end"} <= kinds
        assert "reject" not in kinds  # rejections are logged, never streamed
        deal = next(op for op in ops if op["t"] == "deal")
        assert deal["cards"] is None and deal["counts"] == [13, 13, 13, 13]
        assert all(op["legal"] is None for op in ops if op["t"] == "move")
        assert ops[-1]["t"] == "end"
        for _ in range(50):
            if not web.viewers:
                break
            await asyncio.sleep(0.02)
        assert not web.viewers and not runner.spectators

        # Once over, the match's page is its full replay, with verify's verdict.
        async with http.get(f"/matches/{mid}", allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == f"/matches/{mid}/replay"
        async with http.get(f"/matches/{mid}/replay") as r:
            replay = await r.text()
            assert r.status == 200 and '"verdict":{"ok":true' in replay
            assert '"action_rejected"' not in replay  # the ops, not raw events (the log is gz)
        async with http.get(f"/matches/{mid}/events") as r:
            assert [e async for e in sse(r)] == [("over", "over")]


async def test_the_match_list_stream_counts_as_a_live_viewer(stack):
    """The list's watchers share the server's bound on live viewers with the matches'
    viewers; the list is built once for all of them and stops when the last one goes."""
    server, web = stack  # at most 2 live viewers in all
    created = await create_match(
        server, profile="pusoy-dos", hands=1, seed="list", names=["<i>a</i>", "b", "c", "d"]
    )
    async with aiohttp.ClientSession(web.url) as http:
        first, second = await http.get("/events"), await http.get("/events")
        lists = [sse(first), sse(second)]
        for events in lists:
            name, data = await anext(events)
            doc = json.loads(data)
            assert name == "matches" and doc["running"] == 1
            (m,) = doc["matches"]
            assert m["match_id"] == created.match_id and m["seat_names"][0] == "<i>a</i>"
        assert web.viewers[""] == 2
        async with http.get("/events") as third:
            assert [e async for e in sse(third)] == [
                ("refused", "this server has as many live viewers as it serves; reload later")
            ]
        async with http.get(f"/matches/{created.match_id}/events") as live:
            assert [e async for e in sse(live)] == [
                ("refused", "this server has as many live viewers as it serves; try again later")
            ]
        # A change reaches the watchers as one new list.
        server.registry.cancel(created.match_id, "enough")
        name, data = await anext(lists[0])
        assert name == "matches" and json.loads(data)["matches"][0]["status"] == "cancelled"
        first.close()
        second.close()
    for _ in range(100):
        if not web.viewers and web._list is None:
            break
        await asyncio.sleep(0.02)
    assert not web.viewers and web._list is None


async def test_connections_past_the_limit_get_503(stack):
    _, web = stack
    host, port = "127.0.0.1", web.port
    limit = web.limits.max_connections
    held = [await asyncio.open_connection(host, port) for _ in range(limit)]
    try:
        handler = web.runner.server
        assert handler is not None
        await until(lambda: len(handler.connections) == limit, "the front to take them all")
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(200), 5)
        assert answer.startswith(b"HTTP/1.1 503")
        writer.close()
    finally:
        for _, w in held:
            w.close()

    async def served() -> bool:  # the slots free up again once the front sees them closed
        async with aiohttp.ClientSession(web.url) as http, http.get("/") as r:
            assert r.status in (200, 503)
            return r.status == 200

    await until(served, "a page once the connections are closed")


async def test_a_viewer_that_falls_behind_is_cut_off(stack):
    server, _ = stack
    created = await create_match(
        server, profile="big-two", hands=1, seed="slow", names=["a", "b", "c", "d"]
    )
    runner = server.registry.get(created.match_id)
    assert runner is not None
    feed = PublicFeed(server.registry)
    sub = feed.subscribe(created.match_id, limit=5)
    await asyncio.gather(*(run_bot(Paced(0), server.address, t) for t in created.seat_tokens))
    # What was queued before the cut is still read; then the feed ends as too slow.
    with pytest.raises(ViewerTooSlow):
        for _ in range(20):
            await sub.next(1.0)
    sub.close()
    assert not runner.spectators


def test_serve_http_from_the_command_line(tmp_path):
    proc = subprocess.Popen(
        serve_argv(tmp_path, "127.0.0.1:0", "--http", "127.0.0.1:0"),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        assert "referee listening on 127.0.0.1:" in first, first
        assert second.startswith("spectators' web pages on http://127.0.0.1:"), second
        url = second.split(" on ", 1)[1].strip()

        async def fetch() -> Any:
            async with aiohttp.ClientSession() as http, http.get(url) as r:
                return r.status, await r.text()

        status, text = asyncio.run(fetch())
        assert status == 200 and "No match yet" in text
    finally:
        proc.terminate()
        proc.wait(10)
    taken = subprocess.run(
        [sys.executable, "-m", "referee.cli", "serve", "--address", "127.0.0.1:0", "--http", "x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert taken.returncode == 2 and "HOST:PORT" in taken.stderr


def test_the_http_address_is_host_and_ascii_port():
    assert listen_address(":8080") == ("127.0.0.1", 8080)
    assert listen_address("[::1]:0") == ("::1", 0)
    assert listen_address("0.0.0.0:80") == ("0.0.0.0", 80)
    for bad in ("8080", "host:", "host:65536", "host:\u0668\u0660", "host:+80", "host:8 0"):
        with pytest.raises(OSError, match="HOST:PORT"):
            listen_address(bad)


def test_a_resume_point_is_ascii_digits_or_the_start():
    def resume(value: str) -> int:
        return last_event_id(make_mocked_request("GET", "/", headers={"Last-Event-ID": value}))

    assert resume("42") == 42
    for hostile in ("\u0664\u0662", "-1", "4 2", "1" * 19, "0x10", ""):
        assert resume(hostile) == 0, hostile


async def test_viewers_of_a_match_share_one_feed(tmp_path):
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs")
    await server.start()
    web = WebFront(PublicFeed(server.registry), "127.0.0.1:0", WebLimits(max_viewers_per_match=3))
    await web.start()
    try:
        created = await create_match(
            server,
            profile="big-two",
            hands=1,
            seed="share",
            names=["a", "b", "c", "d"],
            connect_timeout_ms=60_000,
        )
        runner = server.registry.get(created.match_id)
        assert runner is not None
        url = f"/matches/{created.match_id}/events"
        async with aiohttp.ClientSession(web.url) as http:
            first, second = await http.get(url), await http.get(url)
            # A viewer that reconnects gets only what follows the last event it had.
            third = await http.get(url, headers={"Last-Event-ID": "1"})
            streams = [sse(first), sse(second), sse(third)]
            for s in streams[:2]:
                assert json.loads((await anext(s))[1])["t"] == "match"
            assert len(web.live.channels) == 1 and len(runner.spectators) == 1
            bots = [
                asyncio.create_task(run_bot(Paced(0), server.address, t))
                for t in created.seat_tokens
            ]
            seen = [[data async for _, data in s] for s in streams]
            await asyncio.gather(*bots)
            assert seen[0] == seen[1] == seen[2] and json.loads(seen[0][-1])["t"] == "end"
            after_end = await http.get(url)
            assert [e async for e in sse(after_end)] == [("over", "over")]
            for r in (first, second, third):
                r.close()
        for _ in range(50):
            if not web.live.channels and not web.viewers:
                break
            await asyncio.sleep(0.02)
        assert not web.live.channels and not web.viewers and not runner.spectators
    finally:
        await web.stop()
        await server.stop(grace=0.5)


async def test_pages_behind_the_organisers_token_for_a_closed_event(tmp_path):
    """`--http-access organiser`: no page, API or event stream without the token; a
    browser signs in once with a form and holds an HttpOnly, SameSite=Strict cookie
    that is not the token; a script sends the token as a bearer."""
    metrics = Metrics()
    server = RefereeServer("127.0.0.1:0", tmp_path / "logs", metrics=metrics)
    await server.start()
    gate = OrganiserOnly(server.organiser_token, metrics)
    web = WebFront(PublicFeed(server.registry), "127.0.0.1:0", metrics=metrics, access=gate)
    await web.start()
    try:
        names = ["ann-closed", "bob-closed", "cy-closed", "di-closed"]
        created = await create_match(server, profile="big-two", hands=1, seed="x", names=names)
        mid = created.match_id
        paths = ["/", "/api/matches", f"/matches/{mid}", f"/matches/{mid}/events"]
        paths.append(f"/matches/{mid}/replay")
        jar = aiohttp.CookieJar(unsafe=True)  # as a browser keeps cookies of an IP address
        async with aiohttp.ClientSession(web.url, cookie_jar=jar) as anyone:
            for path in paths:
                async with anyone.get(path, allow_redirects=False) as r:
                    text = await r.text()
                    assert r.status == 401 and "closed" not in text, path
                    assert mid not in text.replace(f"/matches/{mid}", ""), path  # but its own
            async with anyone.get("/") as r:
                assert 'action="/login"' in await r.text()  # the way in
            wrong = {"Authorization": "Bearer not-the-token", "Cookie": "referee_session=x"}
            async with anyone.get("/api/matches", headers=wrong) as r:
                assert r.status == 401
            form = {"token": "not-the-token", "next": "/"}
            async with anyone.post("/login", data=form, allow_redirects=False) as r:
                assert r.status == 401 and "not the organiser" in await r.text()
            assert not anyone.cookie_jar.filter_cookies(web.url)

        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(web.url, cookie_jar=jar) as browser:
            form = {"token": server.organiser_token, "next": f"/matches/{mid}"}
            async with browser.post("/login", data=form, allow_redirects=False) as r:
                assert r.status == 303 and r.headers["Location"] == f"/matches/{mid}"
                cookie = r.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
            assert server.organiser_token not in cookie
            async with browser.get("/") as r:
                assert r.status == 200 and mid in await r.text()
            async with browser.get(f"/matches/{mid}/events") as r:
                assert r.status == 200
                assert json.loads((await anext(sse(r)))[1])["t"] == "match"
            async with browser.post("/logout", allow_redirects=False) as r:
                assert r.status == 303
            async with browser.get("/api/matches") as r:
                assert r.status == 401
            evil = {"token": server.organiser_token, "next": "//evil.example/"}
            async with browser.post("/login", data=evil, allow_redirects=False) as r:
                assert r.headers["Location"] == "/"  # never to another site

        bearer = {"Authorization": f"Bearer {server.organiser_token}"}
        async with (
            aiohttp.ClientSession(web.url, headers=bearer) as script,
            script.get("/api/matches") as r,
        ):
            assert r.status == 200
            assert [m["match_id"] for m in (await r.json())["matches"]] == [mid]
    finally:
        await web.stop()
        await server.stop(grace=0.5)
    counted = metrics.exposition()[0].decode()
    assert 'pusoy_referee_organiser_refusals_total{via="web",why="no_credential"} 7.0' in counted
    assert 'pusoy_referee_organiser_refusals_total{via="web",why="wrong_credential"} 2.0' in counted
