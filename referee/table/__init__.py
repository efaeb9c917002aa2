"""One table: four bots seated at a referee for one match, played and reported.

``table`` plays the match (the one place a match's orchestration lives, for ``referee
match`` and for every match of a tournament); ``bots`` says what a seat holds (a built-in
strategy, a command, a remote bot) and names it; ``referees`` is the narrow referee
interface with its two implementations (a referee in this process, or a running
``referee serve`` over its organiser API); ``procs`` spawns and stops bot processes;
``readout`` tells a played match to a person (``referee match``'s notices, summary table
and exit status). What a match came to per seat is read from its log by
``referee.log.summary``.

This package imports nothing itself: a module that needs only ``bots`` (a tournament's
configuration) does not load the table, the referees and the server with it.
"""
