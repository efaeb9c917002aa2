"""One table: four bots seated at a referee for one match, played and reported.

``referees`` is the narrow referee interface with its two implementations (a referee in
this process, or a running ``referee serve`` over its organiser API); ``procs`` spawns and
stops bot processes.
"""
