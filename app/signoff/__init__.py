"""Sign-off of a stored run: its revisions and QA approvals, each bound to the record's
SHA-256."""
