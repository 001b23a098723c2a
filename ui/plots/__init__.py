"""Live plots and the curve machinery under them: bounded points whatever the run's length."""
