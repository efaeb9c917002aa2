"""The one way to speak gRPC to a referee: the caller's side of the wire.

``tls`` (how a client checks the referee and proves itself), ``channels`` (a channel,
with the organiser's bearer token when it has one), ``tokens`` (the one reader of token
files), ``serving`` (the record by which a running ``referee serve`` is found),
``organiser`` (which referee, token and TLS to use, and the MatchService client: every
refusal one typed error, replies checked, logs fetched in bounded memory, one wait for a
match's end) and ``seat`` (the one Python seat client: built-in bots and the stdio
bridge play through it).

Nothing here imports the server: a bot process or ``referee organiser`` loads the wire
and no more. The server takes from here what both ends share (TLS files, token files,
the serving record).
"""
