"""The gRPC referee: a thin layer over the rules engine and the event log."""
