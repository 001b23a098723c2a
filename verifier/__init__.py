"""The standalone verifier of StorWatt result bundles (``storwatt_verify.py``): standard
library only, importing nothing of the station, so an auditor can run and read it alone."""
