"""Tournaments: many fair matches between bot programs, with ratings, resumable.

``config`` reads and checks the TOML file, ``schedule`` turns it into a deterministic
list of matches (duplicate deals: one seed per group, played in every seating),
``results`` keeps the results files, ``ratings`` computes OpenSkill ratings and
statistics, ``progress`` shows how far it got, and ``director`` plays the schedule on a
match backend (``referee.backends``: tables here around a referee, or Ray tasks on a
cluster), ``dispatch`` deciding which match starts when and who sits in its seats.
See docs/tournaments.md.

This package imports nothing itself: importing one of its modules (the ladder's
``toml_reader``, ``ratings``, ``stats``) loads that module, never the director, the
table, the server or scipy.
"""
