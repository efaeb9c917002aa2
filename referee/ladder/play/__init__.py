"""Playing the ladder's matches: which versions play next (``matchmaker``), a new
version's first match (``validation``), the worker processes that claim, play and record
matches (``worker``, ``runner``), where they are played (``backends``, bots in ``jails``)
and the lobby of remote bots (``lobby``)."""
