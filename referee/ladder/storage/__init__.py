"""The ladder's database and the typed API over it: every write one transaction
(``store``, ``queue``), every page's reads one snapshot (``queries``)."""
