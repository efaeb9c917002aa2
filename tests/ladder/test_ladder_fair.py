"""A ladder no team can lock or flood (issue 30), tried as an adversary would, through
``referee ladder serve`` and the lobby of ``referee ladder run`` as real processes: a
stranger's wrong keys never refuse a team's right one (behind a trusted proxy, through
a real proxy hop, each client counted apart; forwarding headers from anyone else
ignored); uploads over a team's limits, or too many at once, are refused before their
body is read, so a flood leaves no byte on disk; a manifest nested past the parser is
refused and its upload settles; sign-in takes the site's own form only (a real Chromium
posting another page's form is refused); a team's page shows only the ladder's notes."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import tarfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from playwright.sync_api import sync_playwright
from sqlalchemy import select as sql_select

from referee.ladder.config import ConfigError, load_ladder_config, parse_ladder_config
from referee.ladder.schema import teams, uploads
from referee.ladder.store import LadderStore
from referee.ladder.submit import manifest_text, pack
from referee.sandbox import Level
from tests.support.jailing import require_level
from tests.support.referee_cli import ROOT, run_referee
from tests.view.conftest import CHROMIUM, CHROMIUM_ARGS, require_chromium

from .hostile import (
    PROXY_SOURCE,
    SECRET,
    EvilPage,
    HeldUpload,
    Proxy,
    first_bot,
    lobby_hello,
    peak_bytes,
)
from .web_client import Site, bearer, free_port, ladder_processes, multipart, wait_for, wait_serving

STRANGER, TEAM, FORGER = "127.0.0.10", "127.0.0.11", "127.0.0.12"
CONFIG = """
[ladder]
name = "fair"
folder = "data"

[rules]
hands = 1

[workers]
count = 1

[lobby]
address = "{lobby}"

[limits]
archive_mb = 1
uploads_per_hour = 3

[web]
trusted_proxies = ["{proxy}"]
uploads_at_once = 3
team_uploads_at_once = 2
"""


class FairSite(Site):
    def __init__(self, folder: Path, url: str, config: Path, lobby: str) -> None:
        super().__init__(folder, url, {})
        self.config = config
        self.lobby = lobby
        self.ladder = load_ladder_config(config)

    def new_team(self, name: str) -> str:
        """A team made as ``referee ladder team create`` makes it; its key."""
        store = LadderStore.open(self.ladder.database, migrate=False)
        try:
            return store.create_team(name).key
        finally:
            store.close()

    def uploads_of(self, team: str) -> list[tuple[int | None, str | None]]:
        """The team's upload records: (version, refusal)."""
        store = LadderStore.open(self.ladder.database, migrate=False)
        try:
            with store.reading() as conn:
                rows = conn.execute(
                    sql_select(uploads.c.version_id, uploads.c.refused)
                    .select_from(uploads.join(teams))
                    .where(teams.c.name == team)
                ).all()
        finally:
            store.close()
        return [(r.version_id, r.refused) for r in rows]

    @property
    def scratch(self) -> Path:
        """Where the web receives uploads."""
        return self.ladder.work_dir / "uploads"

    def upload(self, key: str, archive: bytes, bot: str = "bot", **kw: Any) -> tuple[int, Any]:
        body, kind = multipart({"bot": bot}, archive)
        status, _, answer = self.request(
            "POST", "/api/versions", body, {**bearer(key), "Content-Type": kind}, **kw
        )
        return status, json.loads(answer)


@pytest.fixture(scope="module")
def fair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FairSite]:
    folder = tmp_path_factory.mktemp("ladder-fair")
    config = folder / "ladder.toml"
    lobby = f"127.0.0.1:{free_port()}"
    config.write_text(CONFIG.format(lobby=lobby, proxy=PROXY_SOURCE), encoding="utf-8")
    init = run_referee("ladder", "init", str(config))
    assert init.returncode == 0, init.stderr
    port = free_port()
    site = FairSite(folder, f"http://127.0.0.1:{port}", config, lobby)
    with ladder_processes(folder, config, [("serve", ["--http", f"127.0.0.1:{port}"])]) as procs:
        wait_serving(site, procs)
        yield site


def test_the_web_settings_are_checked(tmp_path: Path) -> None:
    def web(**values: Any) -> Any:
        return parse_ladder_config({"web": values}, tmp_path / "ladder.toml")

    ladder = web(trusted_proxies=["127.0.0.1", "10.0.0.0/8", "::1"], uploads_at_once=4)
    assert [str(n) for n in ladder.trusted_proxies] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]
    assert (ladder.uploads_at_once, ladder.team_uploads_at_once) == (4, 2)
    assert web().trusted_proxies == ()  # nobody's forwarding headers are believed
    with pytest.raises(ConfigError, match=r"web.trusted_proxies\[1\].*not an IP"):
        web(trusted_proxies=["::1", "proxy.example"])
    with pytest.raises(ConfigError, match="uploads_at_once"):
        web(uploads_at_once=0)


def wrong_key(i: int) -> str:
    return f"pdl_{i:016x}_" + "B" * 43


# -- item 2: one stranger locks no team out ------------------------------------------------


def test_a_stranger_behind_the_proxy_locks_no_team_out(fair: FairSite) -> None:
    """Through a real proxy hop: a stranger's wrong keys are throttled for the stranger
    alone (the address the trusted proxy forwards), and a right key gets in from
    anywhere, the stranger's own address included."""
    key = fair.new_team("proxied")
    with Proxy(fair.url) as proxy:
        who = proxy.json("/api/team", bearer(key))
        assert who["team"] == "proxied"
        statuses = [
            proxy.request("GET", "/api/team", headers=bearer(wrong_key(i)), source=STRANGER)[0]
            for i in range(12)
        ]
        assert statuses == [401] * 10 + [429] * 2
        # the team behind the same proxy: its wrong key is its first, its right key opens
        team = [bearer(wrong_key(99)), bearer(key)]
        assert [proxy.request("GET", "/api/team", headers=h, source=TEAM)[0] for h in team] == [
            401,
            200,
        ]
        # a right key is never refused, even from the throttled stranger's address
        assert proxy.request("GET", "/api/team", headers=bearer(key), source=STRANGER)[0] == 200
        # what a client writes in X-Forwarded-For is its own word: counted as the stranger
        status, headers, _ = proxy.request(
            "GET", "/api/team", headers={**bearer(wrong_key(7)), "X-Forwarded-For": TEAM},
            source=STRANGER,
        )  # fmt: skip
        assert status == 429 and int(headers["retry-after"]) > 0
        # and the team's sign-in through the proxy, past the stranger's refusals
        assert proxy.sign_in(key)[0] == 303


def test_forwarding_headers_from_an_untrusted_peer_are_ignored(fair: FairSite) -> None:
    """A client that is no trusted proxy cannot pose as another address: its refusals
    count for its own, whatever it forwards; and a trusted proxy's word that the client
    came over plain HTTP from another machine refuses the key (never in clear)."""
    key = fair.new_team("forged")
    forged = {"X-Forwarded-For": "10.9.9.9", "Forwarded": "for=10.9.9.9"}
    for i in range(11):
        headers = {**bearer(wrong_key(200 + i)), **forged}
        fair.request("GET", "/api/team", headers=headers, source=FORGER)
    status, _, _ = fair.request("GET", "/api/team", headers=bearer(wrong_key(300)), source=FORGER)
    assert status == 429  # counted for the forger's address
    status, _, _ = fair.request(
        "GET", "/api/team", headers=bearer(wrong_key(301)), source=PROXY_SOURCE
    )  # fmt: skip
    assert status == 401
    for forwarded, expected in (
        ("for=192.0.2.7;proto=http", 403),  # a key in clear over a network
        ("for=192.0.2.7;proto=https", 200),
        ('for="[2001:db8::7]:4711";proto=https', 200),
    ):
        status, _, body = fair.request(
            "GET", "/api/team", headers={**bearer(key), "Forwarded": forwarded},
            source=PROXY_SOURCE,
        )  # fmt: skip
        assert status == expected, (forwarded, body)
    status, _, body = fair.request(
        "GET", "/api/team", headers={**bearer(key), "Forwarded": "for=192.0.2.7;proto=https"},
        source=FORGER,
    )  # fmt: skip
    assert status == 200  # from this machine: its word on the client does not matter


def test_a_stranger_in_the_lobby_locks_no_remote_bot_out(fair: FairSite) -> None:
    """Remote bots reach the lobby through an SSH tunnel, all from 127.0.0.1: a
    stranger's wrong keys there are throttled, and a team's right key still joins."""
    require_level(Level.LIGHT)  # referee ladder run refuses to start without a jail
    key = fair.new_team("remote")
    with ladder_processes(fair.folder, fair.config, [("run", [])]) as procs:

        def listening() -> bool:
            assert procs[0].poll() is None, (fair.folder / "run.out").read_text()
            with (
                contextlib.suppress(OSError),
                socket.create_connection(
                    ("127.0.0.1", int(fair.lobby.rsplit(":", 1)[1])), timeout=1
                ),
            ):
                return True
            return False

        wait_for("the lobby", listening, 60)
        answers = [lobby_hello(fair.lobby, wrong_key(500 + i)) for i in range(12)]
        assert all(a.WhichOneof("kind") == "refusal" for a in answers)
        assert "too many refused keys" in answers[-1].refusal.message
        welcome = lobby_hello(fair.lobby, key)
        assert welcome.WhichOneof("kind") == "welcome", welcome
        assert welcome.welcome.bot_name == "remote/far#1"


# -- item 3: refused uploads never reach the disk --------------------------------------------


def test_a_flood_of_uploads_over_a_teams_limit_leaves_no_byte_on_disk(fair: FairSite) -> None:
    """Issue 30's bar: 16 parallel uploads from a team over its uploads an hour leave a
    peak of 0 bytes in work/uploads/; so does one that declares more than the limit."""
    key = fair.new_team("flood")
    for _ in range(3):  # the hour's three uploads, refused ones count
        assert fair.upload(key, b"not an archive")[0] == 400
    archive = os.urandom(1024 * 1024 - 8192)
    big = fair.new_team("big")
    with peak_bytes(fair.scratch) as peak, ThreadPoolExecutor(17) as pool:
        held = list(pool.map(lambda _: HeldUpload(fair, key, archive), range(16)))
        held.append(HeldUpload(fair, big, archive, declared=3 << 20))
        wait_for("all refused before their bodies", lambda: all(h.answered() for h in held), 20)
        answers = list(pool.map(HeldUpload.finish, held))
    # over the hour's count, or (the moment another of the team's was being looked at)
    # over the team's uploads at once: each answered before its body was read
    assert {status for status, _ in answers[:16]} == {429}, answers
    whys = {re.sub(r"wait \d+ s", "wait N s", why) for _, why in answers[:16]}
    assert "3 uploads in the last hour; wait N s" in whys
    assert whys <= {"3 uploads in the last hour; wait N s"} | {
        f"{n} uploads of your team are being received: wait for them" for n in (1, 2)
    }, whys
    assert answers[16][0] == 413 and "over 1048576 bytes" in answers[16][1]
    assert peak[0] == 0
    assert len(fair.uploads_of("flood")) == 3 and fair.uploads_of("big") == []


def test_uploads_at_once_per_team_and_overall(fair: FairSite) -> None:
    """At most two uploads of a team are received at once, three of everyone's (this
    ladder's [web] settings); a refused one is answered at once, and a slot is free
    again when its upload ends."""
    keys = {t: fair.new_team(t) for t in ("busy", "other", "third")}
    junk = os.urandom(256 * 1024)

    def files() -> int:
        return len(list(fair.scratch.glob("*.upload"))) if fair.scratch.exists() else 0

    held = [HeldUpload(fair, keys["busy"], junk) for _ in range(2)]
    wait_for("two uploads being received", lambda: files() == 2, 20)
    extra = HeldUpload(fair, keys["busy"], junk)
    wait_for("the team's third refused", extra.answered, 20)
    status, why = extra.finish()
    assert status == 429 and "being received" in why
    held.append(HeldUpload(fair, keys["other"], junk))
    wait_for("three uploads being received", lambda: files() == 3, 20)
    crowd = HeldUpload(fair, keys["third"], junk)
    wait_for("a fourth refused", crowd.answered, 20)
    status, why = crowd.finish()
    assert status == 503 and "too many uploads" in why
    assert [h.finish()[0] for h in held] == [400, 400, 400]  # received, then not archives
    assert files() == 0
    assert fair.upload(keys["third"], junk)[0] == 400  # received: the slots are free again


# -- item 5: a manifest nested past the parser; sign-in; notes ---------------------------------


def test_a_deeply_nested_manifest_is_refused_and_its_upload_settles(fair: FairSite) -> None:
    key = fair.new_team("nested")
    out = io.BytesIO()
    manifest = b"runtime = " + b"[" * 4000 + b"]" * 4000 + b"\n"
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("bot.toml")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    status, answer = fair.upload(key, out.getvalue())
    assert status == 400 and "nested too deeply" in answer["error"], answer
    assert fair.uploads_of("nested") == [(None, answer["error"])]


def good_archive() -> bytes:
    examples = ROOT / "examples"
    return pack([examples / "greedy_bot.py"], manifest_text("python", ["greedy_bot.py"]))


def test_the_team_page_shows_only_the_ladders_own_notes(fair: FairSite) -> None:
    key = fair.new_team("noted")
    status, cookie = fair.sign_in(key)
    assert status == 303 and cookie
    status, _, page = fair.request("GET", "/team", headers={"Cookie": cookie})
    token = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
    assert status == 200 and token
    body, kind = multipart({"csrf": token.group(1).decode(), "bot": "noted"}, good_archive())
    status, headers, _ = fair.request(
        "POST", "/team/upload", body, {"Cookie": cookie, "Content-Type": kind}
    )
    assert status == 303
    location = headers["location"]
    status, _, page = fair.request("GET", location, headers={"Cookie": cookie})
    assert b"noted/noted#1 uploaded" in page  # the ladder's own note is shown
    lure = "Your key expired: mail it to help@evil.example to get a new one."
    for query in (
        f"note={quote(lure)}",
        f"note={quote(lure)}&mac={parse_qs(urlsplit(location).query)['mac'][0]}",
    ):
        status, _, page = fair.request("GET", f"/team?{query}", headers={"Cookie": cookie})
        assert status == 200 and b"evil.example" not in page
    # a note signed for one team's session shows nothing on another's
    other = fair.new_team("other-noted")
    _, cookie2 = fair.sign_in(other)
    status, _, page = fair.request("GET", location, headers={"Cookie": cookie2})
    assert status == 200 and b"uploaded" not in page


def test_sign_in_takes_this_sites_form_only_in_a_browser(fair: FairSite) -> None:
    """In headless Chromium: the real form signs in (its token and cookie, under this
    site's no-referrer policy, Origin: null); another site's page that posts the form
    with the attacker's key, also with Origin: null and to a browser that holds a
    sign-in cookie, signs nobody in."""
    require_chromium()
    key = fair.new_team("signed")
    attacker = fair.new_team("attacker")
    with sync_playwright() as p, EvilPage(fair.url, attacker) as evil:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            page = context.new_page()
            origins: list[str | None] = []
            page.on(
                "request",
                lambda r: (
                    origins.append(r.headers.get("origin"))
                    if r.url.endswith("/team/login")
                    else None
                ),
            )
            page.goto(fair.url + "/team")  # the victim has seen the form: a cookie
            assert any(c["name"] == "ladder_signin" for c in context.cookies())
            with page.expect_response(lambda r: r.url.endswith("/team/login")) as posted:
                page.goto(evil)
            assert posted.value.status == 403
            page.wait_for_load_state()
            assert "did not come from this site" in page.inner_text("body")
            assert all(c["name"] != "ladder_session" for c in context.cookies())
            assert origins == ["null"]

            page.goto(fair.url + "/team")
            page.fill("input[name=key]", key)
            page.click("button[type=submit]")
            page.wait_for_url(fair.url + "/team")
            assert "Team signed" in page.inner_text("h1")
            assert origins[-1] == "null"  # the site's own form, with its token, gets in
            assert any(c["name"] == "ladder_session" for c in context.cookies())
            context.close()
        finally:
            browser.close()
    status, headers, _ = fair.request(
        "POST", "/team/login", f"key={attacker}".encode(),
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"},
    )  # fmt: skip
    assert status == 403 and "ladder_session" not in headers.get("set-cookie", "")


# -- item 4: a submission carries only the bot -------------------------------------------------


def test_submit_packs_only_the_bot_and_the_ladder_refuses_an_authors_secrets(
    fair: FairSite, tmp_path: Path
) -> None:
    """Issue 30: ``submit ~/firstbot/`` packed the signing key and every match log. Now
    ``--dry-run`` shows what would go (files, total, what is left out and why) and sends
    nothing; a real submit sends only that; and an archive made by hand that holds a
    key or a match log is refused by the ladder, naming the file."""
    key = fair.new_team("author")
    bot = first_bot(tmp_path)
    sent = {"bot.py", "bot.toml", "lib/helper.py", ".pusoyignore"}
    dry = run_referee("ladder", "submit", "--dry-run", "mybot", str(bot))
    assert dry.returncode == 0, dry.stderr
    listed = dict(re.findall(r"^  (\S+)  ([\d,]+)$", dry.stdout, re.M))
    assert set(listed) == sent, dry.stdout
    total = sum((bot / name).stat().st_size for name in sent)
    assert f"4 files, {total:,} bytes" in dry.stdout
    left_out = dry.stdout.split("Left out (never sent):\n")[1]
    for line in (
        ".referee/  a state folder",
        "matches/  a log folder (it holds ",
        "replay.json  a match log",
        "seats/  a tokens folder (it holds alice.token)",
        "scratch/  listed in .pusoyignore",
        "__pycache__/  a tool's folder, not the bot's",
    ):
        assert line in left_out, (line, dry.stdout)
    assert "Dry run: nothing sent." in dry.stdout and "PRIVATE KEY" not in dry.stdout
    assert fair.uploads_of("author") == []

    env = {"PUSOY_LADDER_KEY": key}
    done = run_referee("ladder", "submit", "--url", fair.url, "mybot", str(bot), env=env)
    assert done.returncode == 0, done.stderr
    assert "author/mybot#1: uploaded" in done.stdout
    (version,) = fair.json("/api/team", bearer(key))["bots"]["mybot"]
    unpacked = fair.ladder.versions_dir / version["archive_sha256"]
    on_ladder = {p.relative_to(unpacked).as_posix() for p in unpacked.rglob("*") if p.is_file()}
    assert on_ladder == sent

    whole = tmp_path / "whole.tar.gz"  # what `tar czf whole.tar.gz -C firstbot .` makes
    with tarfile.open(whole, "w:gz") as tar:
        tar.add(bot, arcname=".")
    refused = run_referee("ladder", "submit", "--url", fair.url, "mybot", str(whole), env=env)
    assert refused.returncode == 1
    assert "./.referee/signing-key.pem" in refused.stdout  # listed before it was sent
    assert "'.referee/signing-key.pem' is a private key" in refused.stderr, refused.stderr
    renamed = tmp_path / "renamed.tar.gz"
    with tarfile.open(renamed, "w:gz") as tar:
        for name in ("bot.py", "bot.toml", "replay.json"):
            tar.add(bot / name, arcname=name)
    status, answer = fair.upload(key, renamed.read_bytes(), bot="mybot")
    assert status == 400 and "'replay.json' is a match log" in answer["error"]
    refusals = [why for _, why in fair.uploads_of("author") if why]
    assert len(refusals) == 2 and SECRET not in "".join(refusals)
