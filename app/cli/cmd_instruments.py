"""``storwatt instruments|meter|thermo|sim``: find, read and rehearse with instruments.

* ``instruments list`` — VISA resources on the local buses (USB, GPIB, serial; LAN discovery
  broadcasts, so only with ``--lan``).
* ``meter drivers`` — the driver registry.
* ``meter read`` / ``thermo read`` — identity, ranges and N time-stamped readings.
* ``sim meter`` — a wire-level simulator in the foreground until Ctrl-C.
Errors end with exit code 1 and one actionable line, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import threading
import time
from dataclasses import asdict
from typing import Any

from app.cli import arguments
from drivers.clock import MonotonicClock
from drivers.interfaces import InstrumentError, PowerMeter, PowerSample, TemperatureSample

SIM_MODELS = ("wt310", "wt310e", "wt330", "wt333e", "wt210", "chroma66202", "chroma66203",
              "chroma66204", "pw3335", "pw3336", "ptd", "ptd-temp", "daq970a", "34970a",
              "watchport")


def register(sub: argparse._SubParsersAction) -> None:
    inst = sub.add_parser("instruments", help="find connected instruments")
    inst_actions = inst.add_subparsers(dest="instruments_command", metavar="ACTION",
                                       required=True)
    ls = inst_actions.add_parser("list", help="VISA resources found on this station")
    ls.add_argument("--backend", default="@py", help="VISA backend (@py, @sim, '' for NI)")
    ls.add_argument("--lan", action="store_true",
                    help="also broadcast for VXI-11/HiSLIP instruments on the LAN")
    ls.set_defaults(func=list_command)

    meter = sub.add_parser("meter", help="power meters: drivers and readings")
    meter_actions = meter.add_subparsers(dest="meter_command", metavar="ACTION", required=True)
    meter_actions.add_parser("drivers", help="available meter drivers").set_defaults(
        func=drivers_command)
    _read_parser(meter_actions, "power").set_defaults(func=meter_read_command)

    thermo = sub.add_parser("thermo", help="thermometers: readings")
    thermo_actions = thermo.add_subparsers(dest="thermo_command", metavar="ACTION",
                                           required=True)
    _read_parser(thermo_actions, "temperature").set_defaults(func=thermo_read_command)

    sim = sub.add_parser("sim", help="wire-level instrument simulators on loopback")
    sim_actions = sim.add_subparsers(dest="sim_command", metavar="ACTION", required=True)
    sm = sim_actions.add_parser("meter", help="run a meter simulator until Ctrl-C")
    sm.add_argument("--model", required=True, choices=SIM_MODELS)
    sm.add_argument("--port", type=arguments.tcp_port, default=0,
                    help="TCP port on 127.0.0.1 (0: any free)")
    sm.add_argument("--watts", type=arguments.bounded(0, 1e6, "W"), default=100.0)
    sm.add_argument("--volts", type=arguments.bounded(0, 1e4, "V", above_low=True),
                    default=230.0)
    sm.add_argument("--amps", type=arguments.bounded(0, 1e4, "A"),
                    help="default: watts / (volts · pf)")
    sm.add_argument("--pf", type=arguments.bounded(0, 1, above_low=True), default=0.95)
    sm.add_argument("--hz", type=arguments.bounded(0, 1e4, "Hz", above_low=True),
                    default=50.0)
    sm.add_argument("--celsius", type=arguments.bounded(-273.15, 1000, "°C"), default=23.5,
                    help="thermometer models")
    sm.add_argument("--compat-mode", action="store_true",
                    help="WT300 answering in WT200 compatibility mode (rehearse that error)")
    sm.set_defaults(func=sim_meter_command)


#: what ``read --help`` says for each kind: its drivers, an address and its driver options
_READ_HELP = {
    "power": ("a power meter", "wt300, wt210, chroma66200, pw3335, ptd (storwatt meter drivers)",
              "TCPIP::10.0.0.5::10001::SOCKET (PTDaemon: host:8888)",
              "element=1, range_v=300, range_a=2, backend=@py …"),
    "temperature": ("a thermometer", "daq970a, watchport, ptd-temp (storwatt meter drivers "
                    "lists them with the power drivers)",
                    "TCPIP::10.0.0.9::5025::SOCKET (PTDaemon: host:8889)",
                    "channel=101, tc_type=K (daq970a), backend=@py …")}


def _read_parser(actions: argparse._SubParsersAction, kind: str) -> argparse.ArgumentParser:
    what, drivers, resource, options = _READ_HELP[kind]
    p = actions.add_parser("read", help=f"identity and N readings of {what}",
                           description=f"Open {what}, print who answered and N time-stamped "
                           "readings, as a run would read it.")
    p.add_argument("--driver", required=True, help=f"driver name: {drivers}")
    p.add_argument("--resource", required=True, help=f"its address, e.g. {resource}")
    p.add_argument("--count", type=arguments.whole_number(1, arguments.MAX_READINGS), default=1,
                   help="how many readings (default 1)")
    p.add_argument("--interval", type=arguments.bounded(0, 3600, "s"), default=1.0,
                   help="seconds between readings")
    p.add_argument("--json", action="store_true", help="print the readings as JSON")
    p.add_argument("--option", action="append", default=[], metavar="K=V",
                   help=f"driver option ({options})")
    return p


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``k=v`` strings → options; numbers and true/false become numbers and booleans."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise InstrumentError(f"option {pair!r} is not key=value (e.g. range_v=300)")
        value: Any = text
        if text.lower() in ("true", "false"):
            value = text.lower() == "true"
        else:
            for cast in (int, float):
                try:
                    value = cast(text)
                    break
                except ValueError:
                    pass
        options[key.strip()] = value
    return options


# -- instruments list ---------------------------------------------------------------------------
def list_command(args: argparse.Namespace) -> int:
    try:
        resources = find_resources(args.backend, args.lan)
    except Exception as exc:  # noqa: BLE001 — a broken VISA install is a one-line message
        return arguments.refuse("instruments list", f"VISA backend {args.backend!r} failed: "
                                f"{exc}", args)
    if not resources:
        scope = "USB, GPIB and serial" + (" and LAN" if args.lan else "")
        print(f"no VISA instruments found on {scope} (backend {args.backend}). LAN socket "
              "meters are never discoverable: give their TCPIP::<host>::<port>::SOCKET "
              "resource to 'storwatt meter read'.")
        return 0
    for resource in resources:
        print(resource)
    return 0


def find_resources(backend: str, lan: bool) -> list[str]:
    """Listed resources; with pyvisa-py, LAN discovery (a broadcast) only when asked."""
    import pyvisa

    if backend != "@py" or lan:
        rm = pyvisa.ResourceManager(backend)
        try:
            return sorted(rm.list_resources("?*"))
        finally:
            rm.close()
    from pyvisa import constants
    from pyvisa_py.sessions import Session

    found: list[str] = []
    for (interface, _), session in Session.iter_valid_session_classes():
        if interface in (constants.InterfaceType.tcpip, constants.InterfaceType.vxi):
            continue
        try:
            found += session.list_resources()
        except Exception:  # noqa: BLE001 — one missing bus library must not hide the others
            continue
    return sorted(set(found))


# -- meter drivers ------------------------------------------------------------------------------
def drivers_command(args: argparse.Namespace) -> int:
    from drivers.meters.registry import describe_drivers

    print(f"{'DRIVER':12} {'KIND':12} {'PORT':6} {'TERM':5} MODELS / OPTIONS")
    for d in describe_drivers():
        term = {"\n": "LF", "\r\n": "CRLF", "\r": "CR"}.get(d.read_termination, "?")
        port = str(d.default_port or "—")
        print(f"{d.name:12} {d.kind:12} {port:6} {term:5} {', '.join(d.models)}")
        print(f"{'':37} {d.description}; options: {', '.join(d.options) or '—'}")
    return 0


# -- meter read / thermo read -------------------------------------------------------------------
def meter_read_command(args: argparse.Namespace) -> int:
    return _read("meter read", args, power=True)


def thermo_read_command(args: argparse.Namespace) -> int:
    return _read("thermo read", args, power=False)


def _read(command: str, args: argparse.Namespace, power: bool) -> int:
    from drivers.meters.registry import open_power_meter, open_temperature_meter

    clock = MonotonicClock()
    try:
        options = parse_options(args.option)
        opener = open_power_meter if power else open_temperature_meter
        meter = opener(args.driver, args.resource, **options)
        identity = meter.open()
        try:
            samples = _sample(meter, clock, args.count, args.interval)
            ranges = meter.ranges if isinstance(meter, PowerMeter) else None
        finally:
            meter.close()
    except InstrumentError as exc:
        return arguments.refuse(command, exc, args)
    report = {"identity": asdict(identity),
              "ranges": ({"mode": "fixed", "volts": ranges[0], "amps": ranges[1]} if ranges
                         else {"mode": "auto"}) if power else None,
              "readings": [_sample_json(s) for s in samples]}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_report(identity.describe(), report, power)
    return 0


def _sample(meter: Any, clock: MonotonicClock, count: int, interval: float) -> list[Any]:
    """Readings on a drift-free schedule (t0 + k·interval)."""
    t0 = clock.now()
    samples = []
    for k in range(count):
        clock.sleep_until(t0 + k * interval)
        samples.append(meter.read(clock.now()))
    return samples


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _sample_json(s: PowerSample | TemperatureSample) -> dict[str, Any]:
    data: dict[str, Any] = {k: _num(v) if not isinstance(v, frozenset) else sorted(v)
                            for k, v in asdict(s).items()}
    data["wall_time"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return data


def _print_report(identity: str, report: dict[str, Any], power: bool) -> None:
    print(f"instrument: {identity}")
    if power:
        r = report["ranges"]
        print("ranges: auto" if r["mode"] == "auto" else
              f"ranges: fixed {r['volts']:g} V / {r['amps']:g} A")
    for s in report["readings"]:
        flags = ", ".join(s["flags"]) or "ok"
        if power:
            unc = "—" if s["uncertainty_pct"] is None else f"±{s['uncertainty_pct']:.3f} %"
            print(f"t={s['t']:.3f}  {_fmt(s['watts'], 'W')}  {_fmt(s['volts'], 'V')}  "
                  f"{_fmt(s['amps'], 'A')}  PF {_fmt(s['pf'], '')}  {_fmt(s['freq_hz'], 'Hz')}"
                  f"  u {unc}  [{flags}]")
        else:
            print(f"t={s['t']:.3f}  {_fmt(s['celsius'], '°C')}  [{flags}]")


def _fmt(value: float | None, unit: str) -> str:
    return "—" if value is None else f"{value:.4g} {unit}".strip()


# -- sim meter ----------------------------------------------------------------------------------
def sim_meter_command(args: argparse.Namespace) -> int:
    from drivers.simulators import DRIVER_FOR_MODEL, TEMPERATURE_MODELS, simulator_for

    try:
        if args.model in TEMPERATURE_MODELS:
            sim = simulator_for(args.model, port=args.port)
            sim.set_temperature(args.celsius)
        else:
            sim = simulator_for(args.model, port=args.port, compat_mode=args.compat_mode)
            sim.set_state(args.watts, args.volts, args.amps, args.pf, args.hz)
        port = sim.start()
    except (ValueError, OSError) as exc:
        return arguments.refuse("sim meter", f"cannot start the {args.model} simulator on "
                                f"127.0.0.1:{args.port}: {exc}", args)
    command = "thermo read" if args.model in TEMPERATURE_MODELS else "meter read"
    return serve_until_stopped(sim, f"{args.model} simulator on 127.0.0.1:{port}; read it with: "
                               f"storwatt {command} --driver {DRIVER_FOR_MODEL[args.model]} "
                               f"--resource {sim.resource}")


def serve_until_stopped(sim: Any, announce: str) -> int:
    """Print the simulator's resource (stdout: a script reads it) and ``announce`` (stderr),
    then serve until Ctrl-C or SIGTERM — both stop cleanly, also when started in the
    background (SIGINT ignored by the shell would otherwise leave the simulator running)."""
    stop = threading.Event()
    previous = {n: signal.signal(n, lambda *_: stop.set())
                for n in (signal.SIGTERM, signal.SIGINT)}
    print(sim.resource, flush=True)
    print(f"{announce}  (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        sim.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run these commands alone (``python -m app.cli.cmd_instruments``): the same parsers as
    under ``storwatt``, without importing the other command groups."""
    parser = argparse.ArgumentParser(prog="storwatt")
    register(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
