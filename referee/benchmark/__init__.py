"""The benchmark (docs/benchmark.md): a candidate against a frozen, versioned pool of
anchors on a published deal set, as a tournament (``run``), scored on the pool's fixed
scale (``score``, ``report``); the pool itself (``pool``) and the check that its anchors
still decide as when it was frozen (``frozen``)."""
