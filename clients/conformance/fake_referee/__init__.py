"""A fake referee that replays conformance transcripts against a kit's conformance bot.

It needs grpcio and protobuf only (its generated code is in ``_proto``), so every kit's
``test.sh`` can run it without installing the referee. See ``clients/conformance/README.md``.
"""
