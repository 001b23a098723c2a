"""Durable run storage: schema and migrations, the background run writer, the read model.

``app.storage.opening.open_database(url)`` → a ``Database`` (schema upgraded, crashed runs
marked, journals imported); ``RunWriter(database)`` is the sequencer listener that stores a
run; ``app.storage.repository.load_run(database, id)`` → ``StoredRun`` is what reports and the
history view read. See docs/storage.md.

Nothing is imported here: ``from app.storage.errors import StorageError`` must not load
SQLAlchemy, so a command can catch storage errors without paying for the database at start-up.
"""
