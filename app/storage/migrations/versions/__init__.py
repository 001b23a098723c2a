"""Revision modules, one per schema version: ``vNNNN_description.py``, listed in
:func:`app.storage.migrate.revision_modules` (see the parent package)."""
