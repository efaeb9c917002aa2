"""The web front of ``referee serve --http``: live spectator pages and replays.

``feed`` is its only coupling to the match server; ``app`` is the aiohttp server.
"""
