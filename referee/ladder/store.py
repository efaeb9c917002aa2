"""The ladder's store: a small typed API over its database, every write one transaction.

``LadderStore`` is one object for the ladder's processes: teams and their keys, bots and
their versions, uploads within a team's limits (here), and the queue of matches with its
claim, lease and record (``queue.MatchQueue``, whose docstring says why a SIGKILL at any
moment loses no recorded result and counts no match twice). ``views`` reads it for pages.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from sqlalchemy import Connection, Row, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from referee.ladder import db
from referee.ladder.errors import (
    Conflict,
    KeyRefused,
    LadderError,
    NotFound,
    QuotaExceeded,
)
from referee.ladder.keys import matches as key_matches
from referee.ladder.keys import new_key, parse_key
from referee.ladder.queue import MatchQueue
from referee.ladder.schema import (
    VersionState,
    bots,
    teams,
    uploads,
    versions,
)
from referee.ladder.types import (
    NewKey,
    Team,
    TeamLimits,
    Version,
    team_of,
    version_of,
)
from referee.llm import is_model_seat

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
"""Team and bot names: they go into URLs, file names and logs."""
HOUSE = "house"


def house_bot_name(strategy: str) -> str:
    """The house bot's name for a built-in strategy: the strategy, or for a language
    model ``llm-`` and its settings' name in the ladder's letters.

    >>> house_bot_name("greedy")
    'greedy'
    """
    if not is_model_seat(strategy):
        return strategy
    from referee.table.bots import model_seat_label

    label = re.sub(r"[^a-z0-9_-]+", "-", model_seat_label(strategy).lower()).strip("-_")
    return f"llm-{label}"[:40]


def check_name(kind: str, name: str) -> str:
    """A team or bot name, or LadderError.

    >>> check_name("bot", "greedy-2")
    'greedy-2'
    >>> check_name("team", "../etc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    referee.ladder.errors.LadderError: a team name is 1 to 40 of ..., not '../etc'
    """
    if not NAME.fullmatch(name):
        raise LadderError(
            f"a {kind} name is 1 to 40 of a-z 0-9 _ - (a letter or digit first), not {name[:60]!r}"
        )
    return name


REASON_CHARS = 300
"""A retirement's reason is shown on the bot's public page: one short line."""


def check_reason(text: str) -> str:
    """A reason given for retiring a version, stripped, or LadderError: printable, one
    line, at most ``REASON_CHARS`` characters (it is shown to anyone).

    >>> check_reason("  superseded by mybot2 ")
    'superseded by mybot2'
    >>> check_reason("a\\nb")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    referee.ladder.errors.LadderError: a reason is one line of printable text...
    """
    text = text.strip()
    if not text:
        raise LadderError("give a reason")
    if len(text) > REASON_CHARS:
        raise LadderError(f"a reason is at most {REASON_CHARS} characters, not {len(text)}")
    if not text.isprintable():
        raise LadderError("a reason is one line of printable text (no control characters)")
    return text


class LadderStore(MatchQueue):
    """The ladder's database. ``open`` migrates it to the newest schema first."""

    @classmethod
    def open(cls, url: str, *, migrate: bool = True, **kwargs: Any) -> LadderStore:
        engine = db.make_engine(url)
        if migrate:
            db.upgrade(engine)
        elif db.current_revision(engine) != db.head_revision():
            raise LadderError("the ladder's database is not at the newest schema: migrate it")
        return cls(engine, **kwargs)

    def close(self) -> None:
        self.engine.dispose()

    # -- teams and keys -----------------------------------------------------------------

    def create_team(self, name: str) -> NewKey:
        """A new team and its API key, shown this once (only its hash is kept)."""
        check_name("team", name)
        if name == HOUSE:
            raise Conflict(f"the team name {HOUSE!r} is the ladder's own")
        key, key_id, digest = new_key()

        def body(conn: Connection) -> Team:
            now = self.clock()
            try:
                team_id = conn.execute(
                    insert(teams)
                    .values(name=name, key_id=key_id, key_hash=digest, created_at=now)
                    .values(key_created_at=now, house=False)
                    .returning(teams.c.id)
                ).scalar_one()
            except IntegrityError:
                raise Conflict(f"there is already a team {name!r}") from None
            return Team(team_id, name, False, now, key_id)

        return NewKey(self._write(body), key)

    def rotate_key(self, team_name: str) -> NewKey:
        """A new key for a team; the old one stops working at once."""
        key, key_id, digest = new_key()

        def body(conn: Connection) -> Team:
            row = self._team_row(conn, team_name, lock=True)
            if row.house:
                raise Conflict("the house team has no key")
            conn.execute(
                update(teams)
                .where(teams.c.id == row.id)
                .values(key_id=key_id, key_hash=digest, key_created_at=self.clock())
            )
            return dataclasses.replace(team_of(row), key_id=key_id)

        return NewKey(self._write(body), key)

    def team_by_key(self, key: str) -> Team:
        """The team a presented key belongs to; KeyRefused otherwise. Throttling the
        refusals is the caller's (``keys.KeyGuard``): this only answers."""
        key_id, secret = parse_key(key)
        with db.reading(self.engine) as conn:
            row = conn.execute(select(teams).where(teams.c.key_id == key_id)).first()
        if not key_matches(row.key_hash if row else None, key_id, secret) or row is None:
            raise KeyRefused("not a key of this ladder (or an old one)")
        return team_of(row)

    def team(self, name: str) -> Team:
        with db.reading(self.engine) as conn:
            return team_of(self._team_row(conn, name))

    def _team_row(self, conn: Connection, name: str, lock: bool = False) -> Row[Any]:
        query = select(teams).where(teams.c.name == name)
        row = conn.execute(query.with_for_update() if lock else query).first()
        if row is None:
            raise NotFound(f"no team {name!r}")
        return row

    # -- versions -----------------------------------------------------------------------

    def builtin_version(self, strategy: str) -> Version:
        """The house's version of a built-in strategy (``random``, ``greedy``...), made
        active the first time it is asked for: validation matches and the leaderboard's
        anchors play against it. A language model of the house (``llm:SETTINGS``) is
        the house's bot named ``llm-`` and its settings' name."""
        name = check_name("bot", house_bot_name(strategy))

        def body(conn: Connection) -> int:
            house = conn.execute(select(teams.c.id).where(teams.c.house)).scalar()
            now = self.clock()
            if house is None:
                house = conn.execute(
                    insert(teams)
                    .values(name=HOUSE, created_at=now, house=True)
                    .returning(teams.c.id)
                ).scalar_one()
            bot_id = self._bot_id(conn, house, name, now)
            found = conn.execute(
                select(versions.c.id).where(versions.c.bot_id == bot_id).order_by(versions.c.id)
            ).scalar()
            if found is not None:
                return int(found)
            manifest = json.dumps({"runtime": "builtin", "command": [strategy]})
            return self._insert_version(
                conn, bot_id, now, VersionState.ACTIVE, runtime="builtin", manifest=manifest
            )

        return self.version(self._write(body))

    def reserve_upload(self, team_name: str, archive_bytes: int, limits: TeamLimits) -> int:
        """Count an upload against its team's limits before its archive is unpacked:
        the upload's id, or QuotaExceeded (uploads in the last hour, disk). Refused
        uploads count too, so a team cannot flood the ladder with broken archives."""

        def body(conn: Connection) -> int:
            team = self._team_row(conn, team_name, lock=True)  # one upload at a time
            if team.house:
                raise Conflict("the house team does not upload")
            now = self.clock()
            self._check_rate(conn, team.id, now, limits)
            self._check_disk(conn, team.id, archive_bytes, limits)
            return int(
                conn.execute(
                    insert(uploads)
                    .values(team_id=team.id, at=now, archive_bytes=archive_bytes)
                    .returning(uploads.c.id)
                ).scalar_one()
            )

        return self._write(body)

    def check_upload(
        self,
        team_name: str,
        archive_bytes: int,
        limits: TeamLimits,
        *,
        in_flight: int = 0,
        in_flight_bytes: int = 0,
    ) -> None:
        """Whether the team may start an upload of at most ``archive_bytes`` now, with
        ``in_flight`` uploads of ``in_flight_bytes`` still being received: the web asks
        before it reads a body, so a team over its limits costs the ladder no disk.
        QuotaExceeded (or Conflict for the house); nothing is written, and
        ``reserve_upload`` decides again once the archive is there."""
        with self.reading() as conn:
            team = self._team_row(conn, team_name)
            if team.house:
                raise Conflict("the house team does not upload")
            self._check_rate(conn, team.id, self.clock(), limits, in_flight)
            self._check_disk(conn, team.id, in_flight_bytes + archive_bytes, limits)

    def _check_rate(
        self, conn: Connection, team_id: int, now: float, limits: TeamLimits, in_flight: int = 0
    ) -> None:
        recent = conn.execute(
            select(uploads.c.at)
            .where(uploads.c.team_id == team_id, uploads.c.at > now - 3600)
            .order_by(uploads.c.at)
        ).scalars()
        times = list(recent)
        over = len(times) + in_flight - limits.uploads_per_hour
        if over >= 0:
            wait = times[over] + 3600 - now if over < len(times) else 60.0
            raise QuotaExceeded(
                f"{limits.uploads_per_hour} uploads in the last hour; wait {wait:.0f} s",
                max(1.0, wait),
            )

    def _check_disk(self, conn: Connection, team_id: int, more: int, limits: TeamLimits) -> None:
        used = self._disk_used(conn, team_id)
        if used + more > limits.disk_bytes:
            raise QuotaExceeded(
                f"the team's versions take {used} bytes of its {limits.disk_bytes}: "
                "retire some (their files go, their history stays)"
            )

    def remote_version(self, team_name: str, bot_name: str, limits: TeamLimits) -> Version:
        """The version a remote bot plays as when it joins the lobby with its team's key
        under ``bot_name``: its bot's current remote version (pending or active), or a
        new pending one (made on its first connection, or after one was rejected or
        retired; it counts as an upload). Conflict when the bot is an uploaded one."""
        check_name("bot", bot_name)

        def body(conn: Connection) -> int:
            team = self._team_row(conn, team_name, lock=True)
            if team.house:
                raise Conflict("the house team has no remote bots")
            now = self.clock()
            bot_id = conn.execute(
                select(bots.c.id).where(bots.c.team_id == team.id, bots.c.name == bot_name)
            ).scalar()
            if bot_id is not None:
                latest = conn.execute(
                    select(versions.c.id, versions.c.runtime, versions.c.state)
                    .where(versions.c.bot_id == bot_id)
                    .order_by(versions.c.number.desc())
                    .limit(1)
                ).first()
                live = (VersionState.PENDING, VersionState.ACTIVE)
                if latest is not None and latest.state in live:
                    if latest.runtime == "remote":
                        return int(latest.id)
                    raise Conflict(
                        f"{team_name}/{bot_name} is an uploaded bot: give the remote bot "
                        "another name"
                    )
            self._check_rate(conn, team.id, now, limits)
            upload_id = conn.execute(
                insert(uploads)
                .values(team_id=team.id, at=now, archive_bytes=0)
                .returning(uploads.c.id)
            ).scalar_one()
            bot_id = self._bot_id(conn, team.id, bot_name, now)
            manifest = json.dumps({"runtime": "remote", "command": []})
            version_id = self._insert_version(
                conn, bot_id, now, VersionState.PENDING, runtime="remote", manifest=manifest
            )
            conn.execute(
                update(uploads).where(uploads.c.id == upload_id).values(version_id=version_id)
            )
            return version_id

        return self.version(self._write(body))

    def refuse_upload(self, upload_id: int, reason: str) -> None:
        def body(conn: Connection) -> None:
            conn.execute(
                update(uploads)
                .where(uploads.c.id == upload_id, uploads.c.version_id.is_(None))
                .values(refused=reason[:2000])
            )

        self._write(body)

    def add_version(
        self,
        upload_id: int,
        bot_name: str,
        *,
        archive_sha256: str,
        archive_format: str,
        archive_bytes: int,
        unpacked_bytes: int,
        files: int,
        manifest_json: str,
        runtime: str,
        limits: TeamLimits,
    ) -> Version:
        """A new pending version of ``bot_name`` (the bot is made on its first upload)
        from a reserved upload whose archive unpacked (``archive.UnpackedArchive``)."""
        check_name("bot", bot_name)

        def body(conn: Connection) -> int:
            up = conn.execute(select(uploads).where(uploads.c.id == upload_id)).first()
            if up is None or up.version_id is not None or up.refused is not None:
                raise Conflict(f"upload {upload_id} is not waiting for its version")
            used = self._disk_used(conn, up.team_id)
            if used + archive_bytes + unpacked_bytes > limits.disk_bytes:
                raise QuotaExceeded(
                    f"this version would take the team's disk to "
                    f"{used + archive_bytes + unpacked_bytes} bytes of its {limits.disk_bytes}"
                )
            now = self.clock()
            bot_id = self._bot_id(conn, up.team_id, bot_name, now)
            version_id = self._insert_version(
                conn,
                bot_id,
                now,
                VersionState.PENDING,
                runtime=runtime,
                manifest=manifest_json,
                archive_sha256=archive_sha256,
                archive_format=archive_format,
                archive_bytes=archive_bytes,
                unpacked_bytes=unpacked_bytes,
                files=files,
            )
            conn.execute(
                update(uploads).where(uploads.c.id == upload_id).values(version_id=version_id)
            )
            return version_id

        return self.version(self._write(body))

    def _bot_id(self, conn: Connection, team_id: int, name: str, now: float) -> int:
        query = select(bots.c.id).where(bots.c.team_id == team_id, bots.c.name == name)
        found = conn.execute(query.with_for_update()).scalar()
        if found is not None:
            return int(found)
        return int(
            conn.execute(
                insert(bots).values(team_id=team_id, name=name, created_at=now).returning(bots.c.id)
            ).scalar_one()
        )

    def _insert_version(
        self, conn: Connection, bot_id: int, now: float, state: VersionState, **values: Any
    ) -> int:
        number = conn.execute(
            select(func.coalesce(func.max(versions.c.number), 0)).where(versions.c.bot_id == bot_id)
        ).scalar_one()
        initial = self.rater.initial()
        return int(
            conn.execute(
                insert(versions)
                .values(bot_id=bot_id, number=number + 1, state=state, uploaded_at=now)
                .values(state_at=now, mu=initial.mu, sigma=initial.sigma, **values)
                .values(reason="", stderr_tail="", rated_groups=0, matches=0, failed_matches=0)
                .returning(versions.c.id)
            ).scalar_one()
        )

    def _disk_used(self, conn: Connection, team_id: int) -> int:
        """The bytes of a team's versions whose files are kept (archive and folder)."""
        return int(
            conn.execute(
                select(
                    func.coalesce(func.sum(versions.c.archive_bytes + versions.c.unpacked_bytes), 0)
                )
                .select_from(versions.join(bots))
                .where(bots.c.team_id == team_id, versions.c.files_removed_at.is_(None))
            ).scalar_one()
        )

    def disk_used(self, team_name: str) -> int:
        with db.reading(self.engine) as conn:
            return self._disk_used(conn, self._team_row(conn, team_name).id)

    def activate(self, version_id: int) -> Version:
        """A pending version passed validation: active, and its bot's active version
        before it is retired (its queued matches cancelled, its history kept)."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            self._move(conn, row, VersionState.PENDING, VersionState.ACTIVE, "")
            older = conn.execute(
                select(versions)
                .where(versions.c.bot_id == row.bot_id, versions.c.state == VersionState.ACTIVE)
                .where(versions.c.id != version_id)
                .with_for_update()
            ).all()
            for old in older:
                reason = f"replaced by version {row.number}"
                self._move(conn, old, VersionState.ACTIVE, VersionState.RETIRED, reason)

        self._write(body)
        return self.version(version_id)

    def reject(self, version_id: int, reason: str, stderr_tail: str = "") -> Version:
        """A pending version failed validation, with why and its stderr's last lines."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            self._move(conn, row, VersionState.PENDING, VersionState.REJECTED, reason)
            conn.execute(
                update(versions)
                .where(versions.c.id == version_id)
                .values(stderr_tail=stderr_tail[-8000:])
            )

        self._write(body)
        return self.version(version_id)

    def retire(self, version_id: int, reason: str, *, team: str | None = None) -> Version:
        """An active version leaves the ladder (its team asked, or an organiser): its
        queued matches are cancelled, its history and its page stay. With ``team``, only
        a version of that team: another's is NotFound, worded as a missing one, so a key
        learns nothing of other teams' versions. The house's anchors are the config's
        (``[ladder] anchors``), never retired here: validation matches need them."""
        reason = check_reason(reason)

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            owner = conn.execute(
                select(teams.c.name.label("team"), teams.c.house, bots.c.name.label("bot"))
                .select_from(bots.join(teams))
                .where(bots.c.id == row.bot_id)
            ).one()
            if team is not None and owner.team != team:
                raise NotFound(f"no version {version_id}")
            label = f"{owner.team}/{owner.bot}#{row.number}"
            if owner.house:
                raise Conflict(f"{label} is a house bot: take it out of [ladder] anchors instead")
            if row.state != VersionState.ACTIVE:
                raise Conflict(f"{label} is {row.state}: only an active version can be retired")
            self._move(conn, row, VersionState.ACTIVE, VersionState.RETIRED, reason)

        self._write(body)
        return self.version(version_id)

    def find_version(self, team: str, bot: str, number: int | None = None) -> Version:
        """``team/bot#number``, or without a number the bot's active version: how an
        organiser names a version. NotFound says which part is missing."""
        with db.reading(self.engine) as conn:
            team_id = self._team_row(conn, team).id
            bot_id = conn.execute(
                select(bots.c.id).where(bots.c.team_id == team_id, bots.c.name == bot)
            ).scalar()
            if bot_id is None:
                raise NotFound(f"team {team!r} has no bot {bot!r}")
            query = select(versions.c.id).where(versions.c.bot_id == bot_id)
            if number is None:
                query = query.where(versions.c.state == VersionState.ACTIVE)
            else:
                query = query.where(versions.c.number == number)
            found = conn.execute(query.order_by(versions.c.number.desc())).scalar()
            if found is None:
                which = "active version" if number is None else f"version {number}"
                raise NotFound(f"{team}/{bot} has no {which}")
            return version_of(self._version_row(conn, int(found), full=True))

    def _move(
        self,
        conn: Connection,
        row: Row[Any],
        before: VersionState,
        after: VersionState,
        reason: str,
    ) -> None:
        if row.state != before:
            raise Conflict(
                f"version {row.id} is {row.state}, not {before}: it cannot become {after}"
            )
        now = self.clock()
        conn.execute(
            update(versions)
            .where(versions.c.id == row.id)
            .values(state=after, state_at=now, reason=reason[:2000])
        )
        if after in (VersionState.RETIRED, VersionState.REJECTED):
            self._cancel_matches_of(conn, row.id, f"version {row.id} {after}")

    def files_removed(self, version_id: int) -> None:
        """A retired or rejected version's archive and folder were deleted (to keep a
        team's disk within its limit): its history stays."""

        def body(conn: Connection) -> None:
            row = self._version_row(conn, version_id, lock=True)
            if row.state in (VersionState.PENDING, VersionState.ACTIVE):
                raise Conflict(f"version {version_id} is {row.state}: its files are in use")
            conn.execute(
                update(versions)
                .where(versions.c.id == version_id, versions.c.files_removed_at.is_(None))
                .values(files_removed_at=self.clock())
            )

        self._write(body)

    def versions_to_prune(self, team_name: str, keep: int) -> list[Version]:
        """A team's retired and rejected versions whose files are still kept, beyond its
        ``keep`` newest such ones: their files may go (then ``files_removed``)."""
        with db.reading(self.engine) as conn:
            team = self._team_row(conn, team_name)
            ids = conn.execute(
                select(versions.c.id)
                .select_from(versions.join(bots))
                .where(bots.c.team_id == team.id, versions.c.files_removed_at.is_(None))
                .where(versions.c.state.in_((VersionState.RETIRED, VersionState.REJECTED)))
                .where(versions.c.archive_sha256.is_not(None))
                .order_by(versions.c.state_at.desc(), versions.c.id.desc())
                .offset(keep)
            ).scalars()
            return [version_of(self._version_row(conn, v, full=True)) for v in list(ids)]

    def version(self, version_id: int) -> Version:
        with db.reading(self.engine) as conn:
            return version_of(self._version_row(conn, version_id, full=True))

    def _version_row(
        self, conn: Connection, version_id: int, lock: bool = False, full: bool = False
    ) -> Row[Any]:
        if full:
            query = (
                select(versions, bots.c.name.label("bot"), teams.c.name.label("team"))
                .select_from(versions.join(bots).join(teams))
                .where(versions.c.id == version_id)
            )
        else:
            query = select(versions).where(versions.c.id == version_id)
        row = conn.execute(query.with_for_update() if lock else query).first()
        if row is None:
            raise NotFound(f"no version {version_id}")
        return row
