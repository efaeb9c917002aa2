"""What a team does on the ladder's web, behind its key or its session (``sessions``):
upload a version, retire one, read its own bots' output, see its page.

An upload is taken or refused before its body is read (the key, its declared size, the
team's uploads this hour and disk, the uploads being received at once: ``[web]``), then
streamed to a private file, never past ``[limits] archive_mb``, and goes through the same
``referee.ladder.uploads.submit`` as ``referee ladder submit`` does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import structlog
from aiohttp import BodyPartReader, web
from sqlalchemy import select

from referee.ladder.config import LadderConfig
from referee.ladder.errors import Conflict, LadderError, NotFound, QuotaExceeded
from referee.ladder.storage.records import Team
from referee.ladder.storage.schema import bots, match_seats, seat_results, versions
from referee.ladder.storage.store import LadderStore, check_name
from referee.ladder.uploads.submit import submit
from referee.ladder.web import content
from referee.ladder.web.common import (
    json_response,
    message,
    off_loop,
    valid_ladder_match_id,
    valid_version_id,
)
from referee.ladder.web.sessions import TeamAuth
from referee.log.outputs import tail_bytes

log = structlog.get_logger("referee.ladder.web")

MAX_STDERR_BYTES = 1 << 20
FORM_SLACK_BYTES = 64 * 1024
"""An upload's body past its archive: the multipart framing and the small fields."""


@dataclasses.dataclass(frozen=True, slots=True)
class UploadRefused:
    """An upload refused before its body is read: the HTTP status and why."""

    status: int
    why: str
    retry_after: float = 0.0


class TeamRoutes:
    """The team's routes of the ladder's web (``add_routes``): its page, signing in and
    out (``TeamAuth``'s), uploads, retirements and its bots' output."""

    def __init__(self, config: LadderConfig, store: LadderStore, auth: TeamAuth) -> None:
        self.config = config
        self.store = store
        self.auth = auth
        self._receiving: dict[str, int] = {}
        """Team -> its uploads being received now (``_start_upload``)."""
        self._receiving_bytes: dict[str, int] = {}

    def add_routes(self, r: web.UrlDispatcher) -> None:
        r.add_get("/team", self.auth.team)
        r.add_post("/team/login", self.auth.login)
        r.add_post("/team/logout", self.auth.logout)
        r.add_post("/team/upload", self.upload_form)
        r.add_post("/team/retire", self.retire_form)
        r.add_get("/team/stderr/{match_id}/{seat}", self.stderr)
        r.add_get("/api/team", self.api_team)
        r.add_post("/api/versions", self.api_upload)
        r.add_post("/api/versions/{id}/retire", self.api_retire)

    async def stderr(self, request: web.Request) -> web.StreamResponse:
        signed = await off_loop(lambda: self.auth.session_team(request))
        if signed is None:
            return web.Response(status=401, text="sign in at /team first\n")
        match_id, seat = request.match_info["match_id"], request.match_info["seat"]
        if not valid_ladder_match_id(match_id) or seat not in ("0", "1", "2", "3"):
            return web.Response(status=404, text="no such output\n")
        team = signed[0]

        def find() -> str | None:
            with self.store.reading() as conn:
                row = conn.execute(
                    select(seat_results.c.stderr_path)
                    .select_from(
                        seat_results.join(match_seats)
                        .join(versions, versions.c.id == match_seats.c.version_id)
                        .join(bots)
                    )
                    .where(seat_results.c.match_id == match_id, seat_results.c.seat == int(seat))
                    .where(bots.c.team_id == team.id)
                ).first()
            return str(row.stderr_path) if row is not None and row.stderr_path else None

        rel = await off_loop(find)
        if rel is None:
            return web.Response(status=404, text="no such output of your team's\n")
        path = (self.config.folder / rel).resolve()
        if self.config.stderr_dir.resolve() not in path.parents:
            return web.Response(status=404, text="no such output\n")
        data = await asyncio.to_thread(tail_bytes, path, MAX_STDERR_BYTES)
        return web.Response(
            body=data, content_type="text/plain", charset="utf-8",
            headers={"Content-Disposition": "inline"},
        )  # fmt: skip

    async def _start_upload(self, team: Team, request: web.Request) -> int | UploadRefused:
        """Whether the team's upload may be received now, decided before a byte of its
        body is read: its declared size, the uploads being received (the team's and
        everyone's), the team's uploads this hour and its disk. The bytes it may take,
        its slot taken (give it back with ``_end_upload``), or why not."""
        limit = self.config.archive_limits.max_archive_bytes
        length = request.content_length
        if length is not None and length > limit + FORM_SLACK_BYTES:
            return UploadRefused(413, f"the archive is over {limit} bytes")
        mine = self._receiving.get(team.name, 0)
        if mine >= self.config.team_uploads_at_once:
            why = f"{mine} uploads of your team are being received: wait for them"
            return UploadRefused(429, why, 5)
        if sum(self._receiving.values()) >= self.config.uploads_at_once:
            why = "the ladder is receiving too many uploads: try again in a moment"
            return UploadRefused(503, why, 5)
        size = min(length, limit) if length is not None else limit
        in_flight_bytes = self._receiving_bytes.get(team.name, 0)
        self._receiving[team.name] = mine + 1  # taken before the database is asked
        self._receiving_bytes[team.name] = in_flight_bytes + size
        try:
            await off_loop(
                lambda: self.store.check_upload(
                    team.name,
                    size,
                    self.config.team_limits,
                    in_flight=mine,
                    in_flight_bytes=in_flight_bytes,
                )
            )
        except QuotaExceeded as exc:
            self._end_upload(team, size)
            if exc.retry_after is None:
                return UploadRefused(413, str(exc))
            return UploadRefused(429, str(exc), exc.retry_after)
        except LadderError as exc:
            self._end_upload(team, size)
            return UploadRefused(403, str(exc))
        return size

    def _end_upload(self, team: Team, size: int) -> None:
        self._receiving[team.name] -= 1
        self._receiving_bytes[team.name] -= size
        if self._receiving[team.name] <= 0:
            del self._receiving[team.name], self._receiving_bytes[team.name]

    async def _receive(
        self, request: web.Request, csrf: str | None
    ) -> tuple[dict[str, str], Path | None, str]:
        """The multipart fields (small) and the archive, streamed to a private file no
        larger than the limit; an error text instead when the request is not one.
        ``csrf``: the form's token, which must come, and be right, before the file (so a
        forged form writes nothing); None for the API (a key, no cookie)."""
        limit = self.config.archive_limits.max_archive_bytes
        fields: dict[str, str] = {}
        archive: Path | None = None
        try:
            reader = await request.multipart()
        except (AssertionError, ValueError, KeyError):
            return fields, None, "send multipart/form-data with bot and archive"
        scratch = self.config.work_dir / "uploads"
        scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            while True:
                part = await reader.next()
                if part is None:
                    break
                if not isinstance(part, BodyPartReader):
                    return fields, archive, "nested multipart is not accepted"
                if part.name == "archive":
                    if archive is not None:
                        return fields, archive, "one archive per upload"
                    if csrf is not None and not hmac.compare_digest(
                        fields.get("csrf", ""), csrf
                    ):  # checked before a byte of the file is written
                        return fields, archive, "the form's token must come before the file"
                    fd, name = tempfile.mkstemp(dir=scratch, suffix=".upload")
                    archive = Path(name)
                    size = 0
                    with os.fdopen(fd, "wb") as out:
                        while chunk := await part.read_chunk(1 << 16):
                            size += len(chunk)
                            if size > limit:
                                return fields, archive, f"the archive is over {limit} bytes"
                            out.write(chunk)
                elif part.name in ("bot", "csrf") and part.name not in fields:
                    data = await part.read_chunk(256)
                    if not part.at_eof():
                        return fields, archive, f"the field {part.name} is too long"
                    fields[part.name] = data.decode("utf-8", "replace").strip()
                else:
                    return fields, archive, "unknown field (send bot and archive)"
        except ValueError as exc:
            return fields, archive, f"not a form: {exc}"
        if archive is None or "bot" not in fields:
            return fields, archive, "send both bot and archive"
        return fields, archive, ""

    async def _submit(self, team: Team, bot: str, archive: Path) -> dict[str, Any]:
        try:
            check_name("bot", bot)
            version = await off_loop(
                lambda: submit(self.store, self.config, team.name, bot, archive)
            )
        except LadderError as exc:
            return {"error": str(exc)}
        log.info("version uploaded", version=version.label)
        return content.version_json(version)

    async def api_upload(self, request: web.Request) -> web.Response:
        who = await self.auth.bearer(request)
        if isinstance(who, web.Response):
            return who
        slot = await self._start_upload(who, request)
        if isinstance(slot, UploadRefused):
            headers = {"Retry-After": f"{slot.retry_after:.0f}"} if slot.retry_after else None
            return json_response({"error": slot.why}, slot.status, headers)
        archive: Path | None = None
        try:
            fields, archive, error = await self._receive(request, csrf=None)
            if error:
                return json_response({"error": error}, 413 if "over" in error else 400)
            assert archive is not None
            answer = await self._submit(who, fields["bot"], archive)
        finally:
            if archive is not None:
                archive.unlink(missing_ok=True)
            self._end_upload(who, slot)
        return json_response(answer, 400 if "error" in answer else 201)

    async def upload_form(self, request: web.Request) -> web.Response:
        signed = await off_loop(lambda: self.auth.session_team(request))
        if signed is None or not self.auth.same_origin(request):
            return message(
                self.config.name, 403, "Refused", "Upload from your team's page, signed in."
            )
        team, session = signed
        slot = await self._start_upload(team, request)
        if isinstance(slot, UploadRefused):
            raise web.HTTPSeeOther(self.auth.team_url(session, f"Refused: {slot.why}"))
        archive: Path | None = None
        try:
            fields, archive, error = await self._receive(request, csrf=self.auth.csrf(session))
            if not hmac.compare_digest(fields.get("csrf", ""), self.auth.csrf(session)):
                return message(
                    self.config.name, 403, "Refused", "The form's token is missing or stale."
                )
            if error:
                note = error
            else:
                assert archive is not None
                answer = await self._submit(team, fields["bot"], archive)
                note = (
                    f"Refused: {answer['error']}"
                    if "error" in answer
                    else f"{answer['label']} uploaded: it plays its validation match first."
                )
        finally:
            if archive is not None:
                archive.unlink(missing_ok=True)
            self._end_upload(team, slot)
        raise web.HTTPSeeOther(self.auth.team_url(session, note))

    async def api_team(self, request: web.Request) -> web.Response:
        who = await self.auth.bearer(request)
        if isinstance(who, web.Response):
            return who
        return json_response(await off_loop(lambda: content.team_json(self.store, who.name)))

    async def _retire(self, team: Team, version_text: str, reason: str) -> tuple[int, Any]:
        """Retire one of ``team``'s versions: (HTTP status, the version's JSON or an
        error text). Another team's version reads as a missing one."""
        if not valid_version_id(version_text):
            return 404, "no such version"
        try:
            version = await off_loop(
                lambda: self.store.retire(
                    int(version_text), reason or "retired by its team", team=team.name
                )
            )
        except NotFound as exc:
            return 404, str(exc)
        except Conflict as exc:
            return 409, str(exc)
        except LadderError as exc:
            return 400, str(exc)
        log.info("version retired", version=version.label, by="team")
        return 200, content.version_json(version)

    async def api_retire(self, request: web.Request) -> web.Response:
        """``POST /api/versions/{id}/retire``, with an optional JSON body
        ``{"reason": "..."}``."""
        who = await self.auth.bearer(request)
        if isinstance(who, web.Response):
            return who
        reason = ""
        body = await request.read()  # at most the app's client_max_size
        if body.strip():
            try:
                data = json.loads(body)
            except (ValueError, RecursionError):  # not JSON; nested past the parser
                return json_response({"error": 'send no body, or JSON {"reason": "..."}'}, 400)
            if not isinstance(data, dict) or set(data) - {"reason"}:
                return json_response({"error": 'send no body, or JSON {"reason": "..."}'}, 400)
            if not isinstance(data.get("reason", ""), str):
                return json_response({"error": "the reason is a string"}, 400)
            reason = data.get("reason", "")
        status, answer = await self._retire(who, request.match_info["id"], reason)
        return json_response(answer if status == 200 else {"error": answer}, status)

    async def retire_form(self, request: web.Request) -> web.Response:
        """The team page's retire button: signed in, same origin, the form's token."""
        form = await request.post()
        fields = {k: form.get(k) for k in ("csrf", "version", "reason")}
        text = {k: v if isinstance(v, str) else "" for k, v in fields.items()}
        signed = await self.auth.form_session(request, text["csrf"])
        if signed is None:
            return message(
                self.config.name, 403, "Refused", "Retire from your team's page, signed in."
            )
        status, answer = await self._retire(signed[0], text["version"], text["reason"])
        note = (
            f"{answer['label']} retired: its queued matches are cancelled, its history stays."
            if status == 200
            else f"Refused: {answer}"
        )
        raise web.HTTPSeeOther(self.auth.team_url(signed[1], note))
