"""Values every room shares: run records, units, paths, calibration, the station's settings and
the files a run must never write."""
