"""Sign-off of a stored run: revisions, QA approvals and each COM's verdict from the record and
the technician's audited entry."""
