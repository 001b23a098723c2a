"""Saved SUT profiles: a lab tests the same arrays again and again, so the SUT page can save a
description and load it later. One JSON file in the data directory (``sut-profiles.json``),
written atomically so a crash mid-save never loses the existing profiles."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from app.core.paths import data_dir
from app.core.records import SutDescription, sut_from_dict
from drivers import guarded_file

FILE_NAME = "sut-profiles.json"
#: a profile is under 1 kB: room for thousands, and no device or pipe read without end
MAX_PROFILES_BYTES = 4 << 20


class ProfileStoreError(ValueError):
    """The profiles file cannot be read or written (message names the file)."""


class SutProfileStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / FILE_NAME

    def load_all(self) -> dict[str, SutDescription]:
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(guarded_file.read_text(self.path, "SUT profiles file",
                                                    MAX_PROFILES_BYTES))
        except guarded_file.GuardedFileError as exc:
            raise ProfileStoreError(f"{exc}; fix or move the file away") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise ProfileStoreError(f"{self.path}: cannot read the SUT profiles ({exc}); "
                                    "fix or move the file away") from None
        profiles = {}
        for name, data in raw.items():
            # the wizard's single checkbox meant "available and on": a profile without the
            # on list keeps that meaning instead of turning every COM off
            data = {"coms_on_during_test": data.get("coms_declared", []), **data}
            profiles[name] = sut_from_dict(data)
        return profiles

    def save(self, name: str, sut: SutDescription) -> None:
        name = name.strip()
        if not name:
            raise ProfileStoreError("give the profile a name")
        profiles = {k: asdict(v) for k, v in self.load_all().items()}
        profiles[name] = asdict(sut)
        tmp = self.path.with_suffix(".tmp")
        try:
            tmp.write_text(json.dumps(profiles, indent=2, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise ProfileStoreError(f"{self.path}: cannot save the SUT profile ({exc})") from None
