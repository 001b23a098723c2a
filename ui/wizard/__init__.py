"""The new-run wizard: taxonomy → SUT → workload → instruments → review → Start."""
