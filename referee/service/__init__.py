"""What every long-running service of the referee shares: the gRPC server (``server/``),
the spectators' web (``web/``) and the ladder (``ladder/``).

``rates``: sliding-window counters and log lines that cannot flood the log, keyed by what
a client controls; ``endpoint``: the ``/metrics`` endpoint that serves a referee's or a
ladder's figures; ``logging``: structlog set up once, JSON lines or a terminal's.
"""
