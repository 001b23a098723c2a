"""fio as the workload engine: job files, stream parsing, process control, target safety."""
