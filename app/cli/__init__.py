"""The ``storwatt`` command line. Each ``cmd_*`` module adds one group of sub-commands."""
