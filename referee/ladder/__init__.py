"""The ladder: a standing competition (issue 24), its foundations.

Teams upload bot versions as archives; matches are played continuously; ratings settle.
What is here is what everything else of the ladder stands on:

- ``schema`` + ``migrations/`` + ``db``: the database (SQLite or PostgreSQL, one schema,
  Alembic migrations run at start);
- ``store``: the typed API over it (teams, versions, the queue with its claim, lease and
  record), every write one transaction, recording idempotent by match id;
- ``keys``: teams' API keys (hashed, compared in constant time, guesses throttled);
- ``archive`` + ``manifest``: uploaded archives unpacked safely, and how a version runs;
- ``rating``: the tournament's rating model applied per deal group.

Matchmaking, the worker processes, the web and the ``referee ladder`` command build on
these (docs/ladder.md, "What is still to come"). This package needs the ``ladder`` extra
(SQLAlchemy, Alembic); ``import referee`` does not.
"""
