"""The run view: what the technician watches during a run, fed by the bridge."""
