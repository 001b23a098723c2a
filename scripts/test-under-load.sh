#!/usr/bin/env bash
# Run `make test` on a fresh clone of this checkout's HEAD while CPU-bound processes run
# beside it for the whole run, and exit with the suite's status (issue 36).
#
# Why: a suite that passes only on an idle machine tells a developer nothing on the day the
# machine is busy; recent submissions failed CI on timing races found one at a time. Two
# burners on the project's 2-core machine, with the suite's own workers, keep the load
# average at 4 or more. Run it before any change to the test machinery (tests/suite_guards.py,
# tests/conftest.py, tests/support/time_budget.py, the Makefile's test targets); it is not part
# of .ci/run (README, "Testing").
#
# Behaviour:
#   * clones HEAD of the checkout this script sits in (committed work only: uncommitted
#     changes are named and left out) into a new temporary folder;
#   * starts the burners, then `make test` there with a fresh virtual environment (the
#     Makefile makes it, as on any fresh clone); stops the burners whatever happens;
#   * prints the load average seen during the run (sampled every 15 s) and exits with
#     `make test`'s status; the clone is removed unless --keep.
#
# Usage: scripts/test-under-load.sh [--burners N] [--reuse-venv] [--keep] [--dry-run]
#   --burners N   CPU-bound processes beside the suite (default 2)
#   --reuse-venv  link this checkout's .venv into the clone instead of making a fresh one
#                 (saves the install; the clone's sources still come first on PYTHONPATH,
#                 and make is told not to rebuild the shared environment)
#   --keep        keep the clone (its path is printed)
#   --dry-run     clone, start the burners, check each is burning CPU, stop them; print the
#                 command instead of running the suite
#   Extra make variables after `--` go to `make test` (e.g. -- TEST_WORKERS=4).
set -euo pipefail

usage() { sed -n '/^# Usage:/,/^#   Extra/s/^# \{0,1\}//p' "$0"; }
fail() { echo "test-under-load: $*" >&2; exit 2; }

burners=2 reuse_venv=0 keep=0 dry_run=0
make_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --burners)
            [ $# -ge 2 ] || fail "--burners needs a number (e.g. --burners 2)"
            [[ "$2" =~ ^[1-9][0-9]?$ ]] || fail "--burners must be a whole number from 1 to 99, not '$2'"
            burners=$2; shift 2 ;;
        --reuse-venv) reuse_venv=1; shift ;;
        --keep) keep=1; shift ;;
        --dry-run) dry_run=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; make_args=("$@"); break ;;
        *) fail "unknown option '$1' (see --help)" ;;
    esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
head=$(git -C "$root" rev-parse HEAD)
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
    echo "test-under-load: testing HEAD ${head:0:12}; uncommitted changes in $root are not in it"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/storwatt-under-load.XXXXXX")
clone="$work/storwatt"
pids=()

stop_all() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}

finish() {
    stop_all
    if [ "$keep" = 1 ]; then
        echo "test-under-load: clone kept in $clone"
    else
        rm -rf "$work"
    fi
}
trap finish EXIT
trap 'exit 130' INT TERM

git clone --quiet "$root" "$clone"
git -C "$clone" checkout --quiet --detach "$head"
if [ "$reuse_venv" = 1 ]; then
    venv=$(readlink -f "$root/.venv")
    [ -x "$venv/bin/python" ] || fail "--reuse-venv: no virtual environment at $root/.venv (run make venv there)"
    ln -s "$venv" "$clone/.venv"
    # the shared environment is installed already: never rebuild it from the clone
    make_args=(-o .venv/.installed "${make_args[@]}")
    export PYTHONPATH="$clone${PYTHONPATH:+:$PYTHONPATH}"
fi

cpu_ticks() {  # user + system clock ticks of a process (fields 14 and 15 of its stat)
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    set -- ${stat##*) }
    echo $(( ${12} + ${13} ))
}

for _ in $(seq "$burners"); do
    bash -c 'while :; do :; done' &
    pids+=($!)
done
echo "test-under-load: HEAD ${head:0:12} cloned to $clone; $burners burners: ${pids[*]}"

if [ "$dry_run" = 1 ]; then
    for pid in "${pids[@]}"; do
        for _ in $(seq 100); do
            [ "$(cpu_ticks "$pid")" -gt 0 ] && break
            sleep 0.05
        done
        [ "$(cpu_ticks "$pid")" -gt 0 ] || { echo "test-under-load: burner $pid is not burning CPU" >&2; exit 1; }
    done
    echo "test-under-load: every burner is burning CPU"
    echo "test-under-load: would run: (cd $clone && make test${make_args[*]:+ ${make_args[*]}})"
    stopped=("${pids[@]}")
    stop_all
    for pid in "${stopped[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then
            echo "test-under-load: burner $pid still running" >&2
            exit 1
        fi
    done
    echo "test-under-load: burners stopped: ${stopped[*]}"
    exit 0
fi

loads="$work/loadavg"
( while :; do cut -d' ' -f1 /proc/loadavg >>"$loads"; sleep 15; done ) &
pids+=($!)

status=0
(cd "$clone" && make test "${make_args[@]}") || status=$?
stop_all
echo "test-under-load: load average (1 min) during the run: $(sort -n "$loads" | sed -n '1p;$p' | paste -sd' ' - | sed 's/ / … /') over $(wc -l <"$loads") samples"
echo "test-under-load: make test exited $status"
exit "$status"
