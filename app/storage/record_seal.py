"""The seal on a stored record hash: proof that this PC computed it (issue 39).

A stored record hash (:mod:`app.storage.record_cache`) saves a view rebuilding the facts hash
of a long run, but a row of a database is data any writer of that database can add: a forged
row mapping a tampered record's basis to the genuine hashes made a changed figure print as
approved (issue 39, attack 1). So each row carries an HMAC-SHA256 under a key that never lives
in any database: a random 256-bit key in this PC's StorWatt data folder (``record-seal.key``,
readable by its OS account only). A view trusts a cached hash only when the row carries this
PC's valid seal; any other row — forged, stored before revision 0021, or sealed by another PC
— is recomputed from the record (and this PC's own sealed row added beside it).

What the seal does not prove (docs/security.md): anyone logged in as this PC's OS account can
read the key, as they can edit the station's file; approving and ``runs check`` rebuild the
hash from the record whatever is stored, and the bundle + verifier stay the evidence.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from functools import cache
from pathlib import Path

from app.core.paths import DataDirError, data_dir

KEY_FILE = "record-seal.key"


def key_path() -> Path:
    return data_dir() / KEY_FILE


@cache
def _key_at(path: Path) -> bytes | None:
    """The key in ``path``, made once (0600) when there is none; None when the folder cannot
    hold one (then nothing is sealed and every view recomputes: slower, never wrong)."""
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return None
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it meanwhile
        _key_at.cache_clear()
        return _key_at(path)
    except OSError:
        return None
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(32))
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


def _key() -> bytes | None:
    try:
        return _key_at(key_path())
    except DataDirError:
        return None


def seal(run_id: str, revision: int, hash_format: str, basis: str, facts: str,
         record: str) -> str | None:
    """The HMAC of one cached revision hash under this PC's key (None: no key here)."""
    key = _key()
    if key is None:
        return None
    message = "\n".join((run_id, str(revision), hash_format, basis, facts, record))
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()


def sealed_here(run_id: str, revision: int, hash_format: str, basis: str, facts: str,
                record: str, stored_seal: str | None) -> bool:
    """Whether ``stored_seal`` is this PC's seal of exactly these values."""
    if not stored_seal:
        return False
    expected = seal(run_id, revision, hash_format, basis, facts, record)
    return expected is not None and hmac.compare_digest(expected, stored_seal)
