"""Calls into core, cached across the server's sessions: traces, cost reports, decoding runs."""
