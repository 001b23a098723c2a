"""One run from typed entries to a stored result: the run's configuration, the session, resume,
stop signals, the verdict forecast."""
