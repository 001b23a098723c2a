"""What the method and the station allow: the compliance verdict of a record, one rule per run-
configuration field, one wording of a run's outcome."""
