"""``referee ladder serve``: the public pages and ``/api/`` (``site``), a team's routes
(``teams``), the values both show (``content``, drawn by ``pages``) and a live match's
public events relayed from the worker that plays it (``relay``)."""
