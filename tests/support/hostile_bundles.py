"""Decompression bombs of result bundles, for the hostile-bundle matrix
(tests/test_verifier_hostile.py) and the verifier benchmark (bench/bench_verifier.py).

A bomb member is gigabytes of one repeated line deflated to a few megabytes; it is written
without deflating (or checksumming) gigabytes here: each repeated chunk is one precompressed
deflate block. Its CRC is left unset — a verifier that reads far enough to check it has
already failed the matrix's byte count."""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path
from typing import Any
from unittest import mock


class _Repeat:
    """A deflate "compressor" that emits one precompressed block per input chunk."""

    def __init__(self, chunk: bytes) -> None:
        self.deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        self.block = self.deflate.compress(chunk) + self.deflate.flush(zlib.Z_FULL_FLUSH)

    def compress(self, data: bytes) -> bytes:
        return self.block

    def flush(self) -> bytes:
        return self.deflate.flush()


def bomb_zip(path: Path, files: dict[str, bytes], name: str, size: int,
             manifest: dict[str, Any], line: bytes = b"\n") -> Path:
    """``files`` zipped with member ``name`` replaced by about ``size`` bytes of ``line``
    repeated (honestly sized in the zip, zip64) and ``manifest`` as manifest.json."""
    chunk = line * ((1 << 20) // len(line))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files.items():
            if member not in (name, "manifest.json"):
                archive.writestr(member, data)
        archive.writestr("manifest.json", json.dumps(manifest, sort_keys=True))
        with mock.patch.object(zipfile, "_get_compressor", lambda *a: _Repeat(chunk)), \
                mock.patch.object(zipfile, "crc32", lambda data, crc=0: crc), \
                archive.open(name, "w", force_zip64=True) as bomb:
            for _ in range(size // len(chunk)):
                bomb.write(chunk)
    return path
