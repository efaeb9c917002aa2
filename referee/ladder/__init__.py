"""The ladder: a standing competition. Teams upload bot versions (or connect remote
bots); matches are played continuously; ratings settle. docs/ladder.md.

Four wings, each a package, and what they share at this level:

- ``storage/``: the database (``schema``, ``migrations/``, ``db``, ``backup``) and the
  typed API over it: ``store`` (teams, their keys, bots, versions, uploads within a
  team's limits), ``queue`` (the queue of matches: schedule, claim, renew, record),
  ``records`` (the values both hand out and take in), ``queries`` (what the ladder
  shows, read in one snapshot), ``keys`` (API keys, hashed; ``KeyGuard``), ``rating``;
- ``uploads/``: an upload from someone the ladder does not trust: ``archive`` (unpacked
  as hostile), ``manifest`` (how a version runs), ``submit`` (the one path of every
  upload);
- ``play/``: ``matchmaker``, ``validation``, ``worker`` + ``runner`` (the processes of
  ``referee ladder run``), ``backends`` (the match backends opened for the ladder),
  ``jails``, ``lobby`` (remote bots);
- ``web/``: ``site`` (``referee ladder serve``: the public pages and ``/api/``), ``teams``
  (a team's routes, behind its key or its session), ``content`` (what the web shows,
  as JSON values), ``pages`` (drawn from them), ``relay`` (a live match's events);
- here: ``config`` (the TOML file), ``errors`` (by cause), ``metrics`` (its figures for
  Prometheus, served by ``run`` and ``serve``).

``storage`` stands on no other wing but the manifest's values; ``play`` and ``web`` never
import each other. This package needs the ``ladder`` extra (SQLAlchemy, Alembic);
``import referee`` does not.
"""
