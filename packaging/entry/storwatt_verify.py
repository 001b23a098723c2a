"""Frozen entry point of ``storwatt-verify``: the standalone verifier's own ``main`` (issue 37).

The verifier is one standard-library file that imports nothing of the station; frozen, it runs
on the bundle's Python, so an auditor with the .deb, the tarball or the Windows installer needs
no Python of their own. Its source ships beside it (``_internal/verifier/storwatt_verify.py``)
for an auditor who prefers to read and run it with their own interpreter."""

import sys

from verifier.storwatt_verify import main

if __name__ == "__main__":
    sys.exit(main())
