"""Measurement core: efficiency, stability, histograms, significant digits (pure numpy).

Every rule here comes from method-notes §4 (metrics), §5 (response-time quality) and §9 (fio's
bin layout); callers get a number, an explicit NaN with a reason, or a typed error.
"""

# No re-exports: every caller imports the submodule it needs, so importing one light module
# (formatting, com_savings) never loads numpy for ``storwatt --version``
# (tests/test_cli_startup.py).
