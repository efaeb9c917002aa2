"""pusoy-referee: a network referee for Pusoy Dos and Big Two."""

__version__ = "0.1.0"
