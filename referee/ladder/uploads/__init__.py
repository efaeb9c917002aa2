"""Uploads, which come from someone the ladder does not trust: unpacked as hostile
(``archive``), read for how they run (``manifest``), counted against their team's limits
and kept (``submit``)."""
