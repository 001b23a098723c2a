"""StorWatt domain core: method model, metrics, sequencer, storage, reports and CLI.

Nothing in this package imports Qt; the GUI (``ui``) adapts it.
"""

__version__ = "0.1.0"
