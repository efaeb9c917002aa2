"""``referee ladder serve`` beside a running ``referee ladder run``: the public pages and
``/api/`` as a spectator and a script read them (pages in a real Chromium), a team's page
behind its key, uploads over HTTP, and what a hostile client tries: another team's key
and output, guessed keys, forms posted without their token or from another site, and
archives that are too large, zip bombs, path-traversing or link-holding."""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from referee.ladder.uploads.submit import manifest_text, pack
from referee.sandbox import Level
from tests.support.jailing import require_level
from tests.support.referee_cli import ROOT, run_referee
from tests.view.conftest import CHROMIUM, CHROMIUM_ARGS, require_chromium

from .web_client import (
    Site,
    bearer,
    free_port,
    ladder_processes,
    multipart,
    wait_for,
    wait_serving,
)

EXAMPLES = ROOT / "examples"
CONFIG = """
[ladder]
name = "web <ladder>"
folder = "data"

[rules]
hands = 2

[time]
turn_time_ms = 2000

[matchmaking]
queue = 4

[workers]
count = 1
lease_s = 10

[limits]
archive_mb = 1
unpacked_mb = 2
uploads_per_hour = 30

[[entry]]
team = "alpha"
bot = "weak"
files = ["weak_bot.py"]
command = ["weak_bot.py"]

[[entry]]
team = "beta"
bot = "greedy"
files = ["greedy_bot.py"]
command = ["greedy_bot.py"]
"""


def good_archive(folder: Path) -> bytes:
    return pack([EXAMPLES / "greedy_bot.py"], manifest_text("python", ["greedy_bot.py"]))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    require_level(Level.LIGHT)
    folder = tmp_path_factory.mktemp("ladder-web")
    for name in ("weak_bot.py", "greedy_bot.py"):
        (folder / name).write_bytes((EXAMPLES / name).read_bytes())
    config = folder / "ladder.toml"
    config.write_text(CONFIG, encoding="utf-8")
    init = run_referee("ladder", "init", str(config))
    assert init.returncode == 0, init.stderr
    keys = dict(re.findall(r"Team (\w+): its API key \(shown once\): (\S+)", init.stdout))
    gamma = run_referee("ladder", "team", "create", str(config), "gamma")
    keys["gamma"] = gamma.stdout.splitlines()[1].strip()
    port, metrics = free_port(), free_port()
    s = Site(folder, f"http://127.0.0.1:{port}", keys, f"http://127.0.0.1:{metrics}/metrics")
    serve = ["--http", f"127.0.0.1:{port}", "--metrics", f"127.0.0.1:{metrics}"]
    with ladder_processes(folder, config, [("run", []), ("serve", serve)]) as procs:
        wait_serving(s, procs)
        wait_for(
            "a few rated groups",
            lambda: sum(r["matches"] >= 4 for r in s.json("/api/leaderboard")["leaderboard"]) >= 4,
            240,
        )
        yield s


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


# -- public ----------------------------------------------------------------------------------


def test_the_api_serves_the_leaderboard_bots_queue_and_matches(site: Site) -> None:
    board = site.json("/api/leaderboard")["leaderboard"]
    labels = [r["label"] for r in board]
    assert {"house/random#1", "house/greedy#1", "alpha/weak#1", "beta/greedy#1"} <= set(labels)
    assert [r["rank"] for r in board] == list(range(1, len(board) + 1))
    for r in board:
        assert r["low"] <= r["mu"] <= r["high"]
    bot = site.json("/api/bots/house/greedy")
    assert bot["versions"][0]["label"] == "house/greedy#1"
    assert bot["matches"], "recent matches"
    match = bot["matches"][0]
    detail = site.json(f"/api/matches/{match['match_id']}")
    assert len(detail["seats"]) == 4
    status, _, page = site.request("GET", match["replay"])
    assert status == 200 and b"<html" in page[:200].lower()
    queue = site.json("/api/queue")
    assert (
        queue["queued"] + queue["running"] == len(queue["matches"]) or len(queue["matches"]) == 100
    )
    assert site.request("GET", "/api/bots/house/nobody")[0] == 404
    assert site.request("GET", "/api/matches/..%2f..%2fetc")[0] == 404
    assert site.request("GET", "/bots/house/nobody")[0] == 404


def test_a_running_match_is_relayed_live_with_public_events_only(site: Site) -> None:
    """The web follows a worker's match through that worker's referee: public events,
    never a hand's cards before its end."""

    def live_events() -> list[dict[str, Any]] | None:
        queue = site.json("/api/queue")
        for m in queue["matches"]:
            if not m["live"]:
                continue
            status, _, body = site.request("GET", f"{m['live']}/events")
            ops = [json.loads(line[6:]) for line in body.decode().splitlines()
                   if line.startswith("data: {")]  # fmt: skip
            if status == 200 and ops:
                return ops
        return None

    ops = wait_for("a relayed live match", live_events, 120)
    assert ops
    text = json.dumps(ops)
    assert "token" not in text.lower()


def test_the_leaderboard_and_a_bots_page_in_a_browser(site: Site, browser: Any) -> None:
    board = site.json("/api/leaderboard")["leaderboard"]
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(site.url + "/")
        assert page.inner_text("h1") == "Leaderboard"
        assert "web <ladder>" in page.title()
        rows = page.locator("table.leaderboard tbody tr")
        assert rows.count() >= len(board) - 1  # it may have moved on meanwhile
        first = rows.first.inner_text()
        assert "#1" in first or "/" in first
        page.click("text=greedy >> nth=0")
        page.wait_for_url(re.compile(r"/bots/\w+/greedy$"))
        assert page.locator("h1").inner_text().endswith("greedy")
        assert page.locator("svg.history").count() == 1  # the rating history chart
        assert page.locator("table.h2h tbody tr").count() >= 1  # head to head
        replay = page.locator("a.mono").first
        href = replay.get_attribute("href")
        assert href and href.endswith("/replay")
        replay.click()
        page.wait_for_load_state()
        assert "/replay" in page.url
        page.goto(site.url + "/queue")
        page.wait_for_selector("#queue-rows[data-updates]", timeout=15000)  # fed by /queue/events
        page.set_viewport_size({"width": 390, "height": 800})
        page.goto(site.url + "/")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 400, "the leaderboard fits a phone's width"
        assert errors == []
    finally:
        page.close()


def test_a_team_signs_in_and_uploads_in_a_browser_with_its_csrf_token(
    site: Site, browser: Any
) -> None:
    archive = site.folder / "upload.tar.gz"
    archive.write_bytes(good_archive(site.folder))
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(site.url + "/team")
        page.fill("input[name=key]", "pdl_0123456789abcdef_" + "x" * 43)
        page.click("button[type=submit]")
        assert "opens no team" in page.inner_text("body")
        page.fill("input[name=key]", site.keys["gamma"])
        page.click("button[type=submit]")
        page.wait_for_url(site.url + "/team")
        assert "Team gamma" in page.inner_text("h1")
        page.fill("input[name=bot]", "browsed")
        page.set_input_files("input[name=archive]", str(archive))
        page.click("button:has-text('Upload')")
        page.wait_for_url(re.compile(r"/team\?"))
        assert "gamma/browsed#1 uploaded" in page.inner_text("body")
        cookies = {c["name"]: c for c in context.cookies()}
        assert cookies["ladder_session"]["httpOnly"]
        assert cookies["ladder_session"]["sameSite"] == "Strict"
    finally:
        context.close()


# -- a team's key -------------------------------------------------------------------------


def test_an_upload_over_the_api_and_submit_url(site: Site, tmp_path: Path) -> None:
    body, kind = multipart({"bot": "scripted"}, good_archive(site.folder))
    status, _, answer = site.request(
        "POST", "/api/versions", body, {**bearer(site.keys["gamma"]), "Content-Type": kind}
    )
    assert status == 201, answer
    made = json.loads(answer)
    assert made["label"] == "gamma/scripted#1" and made["state"] == "pending"
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "greedy_bot.py").write_bytes((EXAMPLES / "greedy_bot.py").read_bytes())
    (folder / "bot.toml").write_text(manifest_text("python", ["greedy_bot.py"]))
    done = run_referee(
        "ladder", "submit", "--url", site.url, "cli", str(folder),
        env={"PUSOY_LADDER_KEY": site.keys["gamma"]},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "gamma/cli#1: uploaded" in done.stdout
    local = run_referee(
        "ladder", "submit", "--config", str(site.folder / "ladder.toml"), "cli", str(folder),
        env={"PUSOY_LADDER_KEY": site.keys["gamma"]},
    )  # fmt: skip
    assert local.returncode == 0, local.stderr
    assert "gamma/cli#2: uploaded" in local.stdout
    verdict = wait_for(
        "the validation",
        lambda: (v := site.json(f"/api/versions/{made['id']}"))["state"] != "pending" and v,
    )
    assert verdict["state"] == "active", verdict
    refused = run_referee(
        "ladder", "submit", "--url", "http://192.0.2.1:8080", "cli", str(folder),
        env={"PUSOY_LADDER_KEY": site.keys["gamma"]},
    )  # fmt: skip
    assert refused.returncode != 0 and "never sent in clear" in refused.stderr


def test_another_teams_key_sees_and_changes_only_its_own(site: Site) -> None:
    beta = site.json("/api/team", bearer(site.keys["beta"]))
    assert beta["team"] == "beta" and set(beta["bots"]) == {"greedy"}
    alpha = site.json("/api/team", bearer(site.keys["alpha"]))
    assert set(alpha["bots"]) == {"weak"}
    # alpha's key uploads under alpha, whatever bot name it gives
    body, kind = multipart({"bot": "greedy"}, good_archive(site.folder))
    status, _, answer = site.request(
        "POST", "/api/versions", body, {**bearer(site.keys["alpha"]), "Content-Type": kind}
    )
    assert status == 201 and json.loads(answer)["team"] == "alpha"
    assert site.json("/api/bots/beta/greedy")["versions"][0]["number"] == 1
    # beta's bots' output: beta's session gets it, alpha's does not
    stderr = next(u for m in beta["matches"] for u in m.get("stderr", []))
    cookies = {}
    for team in ("alpha", "beta"):
        status, cookies[team] = site.sign_in(site.keys[team])
        assert status == 303 and cookies[team]
    assert site.request("GET", stderr, headers={"Cookie": cookies["beta"]})[0] == 200
    assert site.request("GET", stderr, headers={"Cookie": cookies["alpha"]})[0] == 404
    assert site.request("GET", stderr)[0] == 401
    forged = cookies["alpha"].replace("alpha", "beta", 1)
    assert site.request("GET", stderr, headers={"Cookie": forged})[0] == 401


def test_forms_without_their_token_or_from_another_site_are_refused(site: Site) -> None:
    status, cookie = site.sign_in(site.keys["alpha"])
    assert status == 303
    status, _, page = site.request("GET", "/team", headers={"Cookie": cookie})
    token = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
    assert status == 200 and token
    before = site.json("/api/team", bearer(site.keys["alpha"]))
    count = sum(len(v) for v in before["bots"].values())
    archive = good_archive(site.folder)
    for fields, extra in (
        ({"bot": "forged"}, {}),  # no token
        ({"csrf": "0" * 64, "bot": "forged"}, {}),  # a wrong one
        ({"csrf": token.group(1).decode(), "bot": "forged"}, {"Origin": "https://evil.example"}),
    ):
        body, kind = multipart(fields, archive)
        status, _, _ = site.request(
            "POST", "/team/upload", body, {"Cookie": cookie, "Content-Type": kind, **extra}
        )
        assert status == 403
    body, kind = multipart({"csrf": token.group(1).decode(), "bot": "formed"}, archive)
    status, headers, _ = site.request(
        "POST", "/team/upload", body, {"Cookie": cookie, "Content-Type": kind}
    )
    assert status == 303 and "uploaded" in urllib.request.unquote(headers["location"])
    after = site.json("/api/team", bearer(site.keys["alpha"]))
    assert sum(len(v) for v in after["bots"].values()) == count + 1
    assert "forged" not in after["bots"]


def test_hostile_archives_are_refused_with_the_reason(site: Site) -> None:
    def upload(data: bytes) -> tuple[int, str]:
        body, kind = multipart({"bot": "hostile"}, data)
        status, _, answer = site.request(
            "POST", "/api/versions", body, {**bearer(site.keys["beta"]), "Content-Type": kind}
        )
        return status, json.loads(answer)["error"]

    manifest = manifest_text("python", ["bot.py"]).encode()

    def tar(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w:gz") as t:
            info = tarfile.TarInfo("bot.toml")
            info.size = len(manifest)
            t.addfile(info, io.BytesIO(manifest))
            for info, data in members:
                t.addfile(info, io.BytesIO(data) if data is not None else None)
        return out.getvalue()

    status, why = upload(os.urandom(1024 * 1024 + 10))  # over archive_mb = 1
    assert status == 413 and "over" in why
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.toml", manifest)
        z.writestr("bot.py", b"\0" * (8 * 1024 * 1024))  # 8 MiB of zeros: ~8 KiB zipped
    assert len(bomb.getvalue()) < 100_000
    status, why = upload(bomb.getvalue())
    assert status == 400 and "unpacks to over" in why, why
    evil = tarfile.TarInfo("../../escape.py")
    evil.size = 2
    status, why = upload(tar((evil, b"x\n")))
    assert status == 400 and ".." in why, why
    link = tarfile.TarInfo("bot.py")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    status, why = upload(tar((link, None)))
    assert status == 400 and "link" in why, why
    assert not (site.folder / "escape.py").exists()
    assert not (site.folder / "data" / "escape.py").exists()


def test_key_guesses_are_throttled_per_address_never_the_right_key(site: Site) -> None:
    """Past ten refused keys a minute, a wrong key from the address is answered "wait",
    but the right one still opens its team (issue 30: one stranger behind a shared
    address locked every team out); the log names the key's public id, never its
    secret."""
    statuses = []
    for i in range(12):
        wrong = f"pdl_{i:016x}_" + "A" * 43
        statuses.append(site.request("GET", "/api/team", headers=bearer(wrong))[0])
    first = statuses.index(429)  # the browser's test guessed once from here too
    assert 9 <= first <= 10 and set(statuses[:first]) == {401} and set(statuses[first:]) == {429}
    status, headers, _ = site.request("GET", "/api/team", headers=bearer("pdl_" + "f" * 16 + "_x"))
    assert status == 429 and int(headers["retry-after"]) > 0
    status, _, body = site.request("GET", "/api/team", headers=bearer(site.keys["alpha"]))
    assert status == 200 and json.loads(body)["team"] == "alpha"
    served = (site.folder / "serve.out").read_text(errors="replace")
    assert "A" * 43 not in served and site.keys["alpha"] not in served


def scrape(site: Site) -> dict[str, float]:
    text = urllib.request.urlopen(site.metrics, timeout=30).read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def test_metrics_count_the_queue_matches_failures_and_refused_keys(site: Site) -> None:
    """Read from the database when scraped (so every process of the ladder agrees with
    /api/status), and the refused keys of the process that serves them: this test's own
    guesses, from a loopback address of its own (the throttle counts per address, so the
    other tests' guesses change none of its answers)."""
    refusals = "pusoy_ladder_key_refusals_total"
    wrong, throttled = f'{refusals}{{why="wrong"}}', f'{refusals}{{why="throttled"}}'
    before = scrape(site)
    status_before = site.json("/api/status")
    answers = [
        site.request("GET", "/api/team", headers=bearer(f"pdl_{i:016x}_" + "B" * 43),
                     source="127.0.0.86")[0]
        for i in range(12)
    ]  # fmt: skip
    values = scrape(site)
    status_after = site.json("/api/status")
    assert answers == [401] * 10 + [429] * 2  # ten refused keys a minute, then throttled
    assert values[wrong] - before[wrong] == 10
    assert values[throttled] - before[throttled] == 2
    finished = values["pusoy_ladder_matches_finished_total"]
    assert status_before["finished"] <= finished <= status_after["finished"]
    assert finished >= 4  # the site's fixture waited for four bots with four matches each
    assert 'pusoy_ladder_queue_length{purpose="ranked"}' in values
    assert "pusoy_ladder_matches_per_minute" in values
    assert 'pusoy_ladder_match_failures_total{cause="timeout"}' in values
    assert values['pusoy_ladder_versions{state="active"}'] >= 4
