"""The lab a run uses, built from its configuration: simulated pieces, the local fio lab, and
what a target is checked for before anything writes to it."""
