"""A team's side of a ladder's web, for ``referee ladder submit``: a key goes only over
TLS or to this machine, and ``--wait`` follows the new version to its verdict (a rejected
one's output is its team's, fetched with its key from ``/api/team``). Nothing of the
ladder extra is imported until it is used."""

from __future__ import annotations

import ipaddress
import json
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from referee.text import printable


def check_key_url(url: str) -> None:
    """A key goes over TLS, or to this machine: never in clear over a network."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if parts.scheme != "http" or not loopback:
        raise SystemExit(
            f"referee ladder: {url} is not https (or http on this machine): a key is never "
            "sent in clear"
        )


SHOWN_OUTPUT_LINES = 20
"""Of a rejected version's output in its validation match, the last lines ``--wait`` shows
(the team page has them all)."""


def wait_verdict(version_id: int, *, url: str | None, database: str | None, key: str) -> int:
    """Poll the version (on the ladder's web at ``url``, or in its ``database`` on the
    ladder's machine) until it is active or rejected; a rejected one's reason and the last
    lines of its output, which only its team may see (the key fetches them). The exit
    status of ``referee ladder submit --wait``: 0 active, 1 rejected or no verdict."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(2)
        if url:
            state = _get_json(url, f"/api/versions/{version_id}")
        else:
            from referee.ladder.api import version_json
            from referee.ladder.store import LadderStore

            assert database is not None
            store = LadderStore.open(database, migrate=False)
            try:
                version = store.version(version_id)
                state = {**version_json(version), "stderr_tail": version.stderr_tail}
            finally:
                store.close()
        if state.get("state") in ("active", "rejected"):
            print(
                printable(
                    f"{state['label']}: {state['state']}"
                    + (f": {state['reason']}" if state.get("reason") else "")
                )
            )
            if state["state"] == "active":
                return 0
            if url:
                state["stderr_tail"] = _own_output(url, key, version_id)
            _print_output(state.get("stderr_tail") or "")
            return 1
    print("no verdict after 10 minutes: is the ladder running?", file=sys.stderr)
    return 1


def _own_output(url: str, key: str, version_id: int) -> str:
    """A version's validation output from its team's own page (``/api/team``); empty
    when that page cannot be read (a ladder of an older version, say)."""
    try:
        team = _get_json(url, "/api/team", key=key)
    except (OSError, ValueError):
        return ""
    for versions in team.get("bots", {}).values():
        for v in versions:
            if v.get("id") == version_id:
                return str(v.get("stderr_tail") or "")
    return ""


def _print_output(tail: str) -> None:
    lines = tail.rstrip("\n").splitlines()[-SHOWN_OUTPUT_LINES:]
    if not lines:
        print("  its output in the validation match: none here (see your team page)")
        return
    last = "its last line" if len(lines) == 1 else f"its last {len(lines)} lines"
    print(f"  its output in the validation match, {last} (all of it on your team page):")
    for line in lines:
        print(f"  | {printable(line)}")


def _get_json(url: str, path: str, *, key: str = "") -> dict[str, Any]:
    import urllib.request

    request = urllib.request.Request(url.rstrip("/") + path)
    if key:
        check_key_url(url)
        request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=30) as response:
        data: dict[str, Any] = json.loads(response.read(1 << 20))
    return data


__all__ = ["SHOWN_OUTPUT_LINES", "check_key_url", "wait_verdict"]
