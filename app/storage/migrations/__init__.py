"""Schema revisions of the run database, applied by :mod:`app.storage.migrate`.

Each module in :mod:`app.storage.migrations.versions` is an ordinary alembic revision
(``revision``, ``down_revision``, ``upgrade()``, ``downgrade()`` using ``alembic.op``). They are
imported as Python modules rather than read from a script folder, so they work the same from a
source checkout, an installed wheel and a PyInstaller bundle (no ``alembic.ini``, no data files).
Revision ids are zero-padded numbers so "newer than this StorWatt" is a plain comparison.
"""
