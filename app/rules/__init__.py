"""What the method and the station allow: the compliance verdict of a record, each COM's verdict
from the record and the technician's audited entry, one rule per run-configuration field, one
wording of a run's outcome."""
