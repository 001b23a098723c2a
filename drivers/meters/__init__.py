"""Production meter drivers (pyvisa, PTDaemon socket); pick one through ``registry``."""
