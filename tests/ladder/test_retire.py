"""Retiring a version, on each engine, each of the three ways: the organiser's
``referee ladder retire``, a team's key on ``POST /api/versions/ID/retire``, and the
retire button of the team page (a form with its CSRF token). A retired version leaves
the queue and the leaderboard, and keeps its page, reason and matches; another team's
key or session, a form without its token and a second retirement are refused.

The web is a real ``LadderWeb`` on a loopback port, in this process, over the test's
store: no worker plays, the matches are recorded by hand (``helpers``), so this is fast.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from referee.cli import main
from referee.ladder import views
from referee.ladder.config import parse_ladder_config
from referee.ladder.schema import MatchState, VersionState
from referee.ladder.store import LadderStore
from referee.ladder.web import LadderWeb

from .helpers import active_version, finished

ROTATIONS = [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]
TEAMS = "abcd"


class Ladder:
    """Four teams with an active version each, a ranked group queued of which one match
    was played: the state a version is retired from."""

    def __init__(self, store: LadderStore) -> None:
        self.store = store
        self.keys = {t: store.create_team(t).key for t in TEAMS}
        self.ids = {t: active_version(store, t, "bot").id for t in TEAMS}
        self.matches = store.schedule([self.ids[t] for t in TEAMS], ROTATIONS)
        claim = store.claim("w", 60)
        assert claim is not None
        store.record(claim.match_id, claim.token, finished(match_id=claim.match_id))
        self.played = claim.match_id

    def queued_of(self, team: str) -> list[str]:
        return [
            e.match_id
            for e in views.queue(self.store)
            if e.state == MatchState.SCHEDULED and self.ids[team] in e.version_ids
        ]

    def assert_retired_keeping_its_history(self, team: str, reason: str) -> None:
        v = self.store.version(self.ids[team])
        assert v.state is VersionState.RETIRED and v.reason == reason
        assert v.matches == 1  # the match it played is still counted
        assert self.queued_of(team) == []
        board = {r.version_id for r in views.leaderboard(self.store)}
        assert self.ids[team] not in board and len(board) == 3
        assert views.check(self.store) == []


@pytest.fixture
def ladder(store: LadderStore) -> Ladder:
    made = Ladder(store)
    assert len(made.queued_of("a")) == 3
    return made


# -- the organiser ---------------------------------------------------------------------


def test_the_organiser_retires_a_bots_active_version(
    ladder: Ladder, migrated_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text(f'[ladder]\nfolder = "data"\ndatabase = "{migrated_url}"\n')

    def retire(*args: str) -> tuple[int, str, str]:
        code = main(["ladder", "retire", str(config), *args])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = retire("a", "bot", "--reason", "broke the rules")
    assert code == 0 and out.startswith("a/bot#1: retired (broke the rules)")
    ladder.assert_retired_keeping_its_history("a", "broke the rules")

    code, _, err = retire("b", "bot")  # the default reason
    assert code == 0
    assert ladder.store.version(ladder.ids["b"]).reason == "retired by the ladder's organiser"

    for args, why in (
        (("a", "bot"), "a/bot has no active version"),
        (("a", "bot", "--version", "1"), "a/bot#1 is retired: only an active version"),
        (("c", "bot", "--version", "7"), "c/bot has no version 7"),
        (("c", "nobot"), "team 'c' has no bot 'nobot'"),
        (("zz", "bot"), "no team 'zz'"),
        (("../x", "bot"), "a team name is 1 to 40"),
        (("c", "bot", "--reason", "x" * 301), "at most 300 characters"),
        (("c", "bot", "--reason", "two\nlines"), "one line of printable text"),
    ):
        code, out, err = retire(*args)
        assert (code, out) == (2, ""), args
        assert err.startswith("referee ladder retire: ") and why in err, (args, err)
        assert "Traceback" not in err
    assert ladder.store.version(ladder.ids["c"]).state is VersionState.ACTIVE

    greedy = ladder.store.builtin_version("greedy")
    code, _, err = retire("house", "greedy")
    assert code == 2 and "house bot" in err
    assert ladder.store.version(greedy.id).state is VersionState.ACTIVE


# -- a team, on the web ------------------------------------------------------------------


class Client:
    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url

    async def request(
        self, method: str, path: str, **kwargs: Any
    ) -> tuple[int, dict[str, str], str]:
        async with self.session.request(
            method, self.url + path, allow_redirects=False, **kwargs
        ) as r:
            headers = dict(r.headers)
            if "Set-Cookie" in r.headers:  # several: one per line
                headers["Set-Cookie"] = "\n".join(r.headers.getall("Set-Cookie"))
            return r.status, headers, await r.text()

    async def json(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        async with self.session.request(method, self.url + path, **kwargs) as r:
            return r.status, await r.json()


@pytest.fixture
async def web(ladder: Ladder, tmp_path: Path) -> AsyncIterator[Client]:
    config = parse_ladder_config({"ladder": {"folder": "data"}}, tmp_path / "ladder.toml")
    site = LadderWeb(config, ladder.store, "127.0.0.1:0")
    await site.start()
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
            yield Client(session, site.url)
    finally:
        await site.stop()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_a_team_retires_its_version_with_its_key(ladder: Ladder, web: Client) -> None:
    vid = ladder.ids["a"]
    path = f"/api/versions/{vid}/retire"
    queued = ladder.queued_of("a")
    status, answer = await web.json("POST", path, headers=bearer(ladder.keys["a"]))
    assert status == 200, answer
    for match_id in queued:
        status, match = await web.json("GET", f"/api/matches/{match_id}")
        assert (match["state"], match["failure"]) == ("cancelled", "retired")
    assert (answer["label"], answer["state"]) == ("a/bot#1", "retired")
    assert answer["reason"] == "retired by its team"
    ladder.assert_retired_keeping_its_history("a", "retired by its team")

    # its page and JSON keep it, with its state, reason and matches
    status, bot = await web.json("GET", "/api/bots/a/bot")
    assert status == 200 and bot["current"]["state"] == "retired"
    assert [(v["state"], v["reason"]) for v in bot["versions"]] == [
        ("retired", "retired by its team")
    ]
    played = [m for m in bot["matches"] if m["state"] == "finished"]
    assert [m["match_id"] for m in played] == [ladder.played]
    status, _, page = await web.request("GET", "/bots/a/bot")
    assert status == 200 and 's-retired">retired' in page and "retired by its team" in page
    status, board = await web.json("GET", "/api/leaderboard")
    assert vid not in {r["version_id"] for r in board["leaderboard"]}

    # twice: a clear refusal, nothing changes
    status, answer = await web.json("POST", path, headers=bearer(ladder.keys["a"]))
    assert status == 409 and "a/bot#1 is retired" in answer["error"]

    # a reason of its own
    status, answer = await web.json(
        "POST",
        f"/api/versions/{ladder.ids['b']}/retire",
        headers=bearer(ladder.keys["b"]),
        json={"reason": "superseded by bot2"},
    )
    assert status == 200 and answer["reason"] == "superseded by bot2"


async def test_another_teams_key_and_hostile_requests_are_refused(
    ladder: Ladder, web: Client
) -> None:
    vid = ladder.ids["a"]
    path = f"/api/versions/{vid}/retire"
    theirs = await web.json("POST", path, headers=bearer(ladder.keys["b"]))
    missing = await web.json(
        "POST", "/api/versions/999999/retire", headers=bearer(ladder.keys["b"])
    )
    assert theirs[0] == missing[0] == 404
    assert theirs[1]["error"] == f"no version {vid}"  # as if it did not exist
    for headers, body, status in (
        ({}, None, 401),
        (bearer("pdl_0123456789abcdef_" + "x" * 43), None, 401),
        (bearer(ladder.keys["a"]), b"not json", 400),
        (bearer(ladder.keys["a"]), b'["reason"]', 400),
        (bearer(ladder.keys["a"]), b'{"reason": 3}', 400),
        (bearer(ladder.keys["a"]), b'{"reason": "x", "state": "active"}', 400),
        (bearer(ladder.keys["a"]), b'{"reason": "' + b"x" * 301 + b'"}', 400),
        (bearer(ladder.keys["a"]), b'{"reason": "a\\u0000b"}', 400),
        (bearer(ladder.keys["a"]), b"[" * 15_000, 400),  # nested past the JSON parser
        (bearer(ladder.keys["a"]), b"x" * 20_000, 413),  # over the web's form limit
    ):
        got, _, text = await web.request("POST", path, headers=headers, data=body)
        assert got == status, (headers, body, got, text)
    for bad in ("..%2f1", "%D9%A1", "1" * 13, "-1"):  # "%D9%A1": an Arabic-Indic one
        got, _, _ = await web.request(
            "POST", f"/api/versions/{bad}/retire", headers=bearer(ladder.keys["a"])
        )
        assert got == 404, bad
    assert ladder.store.version(vid).state is VersionState.ACTIVE
    assert len(ladder.queued_of("a")) == 3


def note(headers: dict[str, str]) -> str:
    """The note a form's answer sends the team page."""
    return parse_qs(urlsplit(headers["Location"]).query)["note"][0]


async def sign_in(web: Client, key: str) -> tuple[str, str]:
    """A session cookie and the team page's CSRF token, through the sign-in form (its
    token and the sign-in cookie it is bound to)."""
    status, headers, page = await web.request("GET", "/team")
    form_token = re.search(r'name="token" value="([0-9a-f]+)"', page)
    assert status == 200 and form_token
    status, headers, _ = await web.request(
        "POST",
        "/team/login",
        data={"token": form_token.group(1), "key": key},
        headers={"Cookie": headers["Set-Cookie"].split(";")[0]},
    )
    session = re.search(r"ladder_session=[^;]+", headers["Set-Cookie"])
    assert status == 303 and session
    cookie = session.group(0)
    status, _, page = await web.request("GET", "/team", headers={"Cookie": cookie})
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert status == 200 and token
    return cookie, token.group(1)


async def test_the_team_pages_retire_button_needs_its_token(ladder: Ladder, web: Client) -> None:
    vid = ladder.ids["a"]
    cookie, token = await sign_in(web, ladder.keys["a"])
    _, _, page = await web.request("GET", "/team", headers={"Cookie": cookie})
    assert page.count('action="/team/retire"') == 1
    assert f'name="version" value="{vid}"' in page

    for form, extra in (
        ({"version": str(vid)}, {}),  # no token
        ({"csrf": "0" * 64, "version": str(vid)}, {}),  # a wrong one
        ({"csrf": token, "version": str(vid)}, {"Origin": "https://evil.example"}),
    ):
        status, _, _ = await web.request(
            "POST", "/team/retire", data=form, headers={"Cookie": cookie, **extra}
        )
        assert status == 403
    status, _, _ = await web.request("POST", "/team/retire", data={"csrf": token, "version": "1"})
    assert status == 403  # no session
    assert ladder.store.version(vid).state is VersionState.ACTIVE

    # another team's session, with its own good token, cannot retire a's version
    b_cookie, b_token = await sign_in(web, ladder.keys["b"])
    status, headers, _ = await web.request(
        "POST",
        "/team/retire",
        data={"csrf": b_token, "version": str(vid)},
        headers={"Cookie": b_cookie},
    )
    assert status == 303 and note(headers) == f"Refused: no version {vid}"
    assert ladder.store.version(vid).state is VersionState.ACTIVE

    form = {"csrf": token, "version": str(vid), "reason": "tried something else"}
    status, headers, _ = await web.request(
        "POST", "/team/retire", data=form, headers={"Cookie": cookie}
    )
    assert status == 303 and note(headers).startswith("a/bot#1 retired: its queued")
    ladder.assert_retired_keeping_its_history("a", "tried something else")
    _, _, page = await web.request("GET", "/team", headers={"Cookie": cookie})
    assert 'action="/team/retire"' not in page and "tried something else" in page

    status, headers, _ = await web.request(
        "POST", "/team/retire", data=form, headers={"Cookie": cookie}
    )
    assert status == 303 and "a/bot#1 is retired: only an active" in note(headers)
