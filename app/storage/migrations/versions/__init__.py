"""Revision modules, one per schema version: ``vNNNN_description.py``, listed in
:data:`app.storage.migrate.REVISION_MODULES` (see the parent package)."""
