"""The lab PostgreSQL's roles, as SQL the schema owner runs (issue 39, docs/security.md).

Two group roles hold the rights and never log in: ``storwatt_station`` (store runs) and
``storwatt_qa`` (read runs, add audit entries). Every station PC and every QA person logs in
as a role of its own, a member of one group, so no password is shared between benches and the
server knows who wrote each row. Which rows a login may change is not decided here but by
the guard of schema revision 0022 (a station changes only the unfinished runs it stored;
approvals and dispositions are QA's; each audit entry records its login).

:func:`roles_sql` is what ``storwatt db roles`` prints or applies and what docs/storage.md
shows; it can be run again (after ``storwatt db upgrade``, for a new bench): every statement
tolerates what exists already.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

STATION_GROUP = "storwatt_station"
QA_GROUP = "storwatt_qa"

#: a login name StorWatt writes into SQL unquoted: lower-case, as PostgreSQL folds it
LOGIN = re.compile(r"[a-z_][a-z0-9_]{0,62}")

#: rights of every station login (through the group): the run writer's and the sender's
STATION_GRANTS = f"""\
GRANT USAGE ON SCHEMA public TO {STATION_GROUP};
GRANT SELECT, INSERT, UPDATE ON stations, suts, runs, phases, phase_attempts, run_resumptions,
    power_samples, temperature_samples, workload_intervals, histograms, intervals, metrics,
    search_results, instruments, events, power_inputs, power_input_samples
    TO {STATION_GROUP};
GRANT DELETE ON phases, phase_attempts, run_resumptions, metrics, instruments, power_inputs
    TO {STATION_GROUP};
GRANT SELECT, INSERT ON audit_entries TO {STATION_GROUP};
GRANT SELECT, INSERT ON record_hashes TO {STATION_GROUP};
GRANT SELECT ON alembic_version, database_identity TO {STATION_GROUP};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {STATION_GROUP};
"""

QA_GRANTS = f"""\
GRANT USAGE ON SCHEMA public TO {QA_GROUP};
GRANT SELECT ON ALL TABLES IN SCHEMA public TO {QA_GROUP};
GRANT INSERT ON audit_entries TO {QA_GROUP};
GRANT USAGE ON SEQUENCE audit_entries_id_seq TO {QA_GROUP};
GRANT INSERT ON record_hashes TO {QA_GROUP};
GRANT USAGE ON SEQUENCE record_hashes_id_seq TO {QA_GROUP};
"""


class RoleNameError(ValueError):
    """A login name StorWatt will not write into SQL; the message names it and the rule."""


def _create(role: str, login: bool) -> str:
    kind = "LOGIN" if login else "NOLOGIN"
    return (f"DO $$ BEGIN CREATE ROLE {role} {kind}; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$;\n")


def checked_login(name: str) -> str:
    """``name`` if it is a plain login name, else a one-line refusal."""
    if not LOGIN.fullmatch(name) or name in (STATION_GROUP, QA_GROUP):
        raise RoleNameError(
            f"login name {name!r} refused: use 1-63 lower-case letters, digits and '_', "
            f"starting with a letter or '_', and not {STATION_GROUP} or {QA_GROUP}")
    return name


def roles_sql(stations: Sequence[str], qa: Sequence[str]) -> str:
    """The owner's SQL: both groups and their grants, then one login per station and per QA
    person, each a member of its group."""
    logins = [(checked_login(n), STATION_GROUP) for n in stations]
    logins += [(checked_login(n), QA_GROUP) for n in qa]
    out = [_create(STATION_GROUP, False), STATION_GRANTS, _create(QA_GROUP, False), QA_GRANTS]
    for name, group in logins:
        out.append(_create(name, True))
        out.append(f"GRANT {group} TO {name};\n")
    return "".join(out)
