"""The match viewer: self-contained HTML replays, tournament indexes and live pages.

``fold`` turns events into the page's data with the rules engine; ``page`` wraps that
data, the script and the styles into one HTML file; ``index`` lists a folder of matches;
``web`` serves live pages next to the gRPC server. The page itself is a renderer.
"""
