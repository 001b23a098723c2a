"""The taxonomy's fixed vocabulary: the default method and what each yes/no attribute means.

Plain data with no imports, apart from :mod:`app.method.taxonomy` (which needs pydantic), so
``storwatt taxonomy classify``'s parser can offer the flags and their help text without
loading the method model at start-up (tests/test_cli_startup.py).
"""

from __future__ import annotations

#: the method whose taxonomy the wizard and ``storwatt taxonomy`` use when none is named
DEFAULT_METHOD = "emerald-block-v3"

#: yes/no attribute → (text when required, text when prohibited), read as "Online 4 needs …"
NEEDS = {
    "consumer_component": ("to be a consumer/component product",
                           "not to be a consumer/component product"),
    "integrated_controller": ("an integrated storage controller",
                              "no integrated storage controller"),
    "storage_protection": ("storage protection", "no storage protection"),
    "no_spof": ("no single point of failure", "a single point of failure"),
    "non_disruptive_service": ("non-disruptive serviceability",
                               "no non-disruptive serviceability"),
    "fba_ckd": ("FBA/CKD support", "no FBA/CKD support"),
    "robotics": ("robotics", "no robotics"),
}
