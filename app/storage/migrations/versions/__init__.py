"""Revision modules, one per schema version: ``NNNN_description.py`` (see the parent package)."""
