"""``storwatt rails read|sim``: check a current-sensor board on the bench (issue 42).

* ``rails read --resource R --devices FILE`` — open the DAQ, scan every channel the device file
  wires (``app/station/device_file.py``), N times, and print each channel's volts and each
  device's watts with their uncertainty, as a run will compute them
  (``app/metrics/rail_power.py``): the check a technician makes before trusting the board.
* ``rails sim --devices FILE`` — a loopback DAQ whose channels read what each rail's sensor
  would put out at a steady current per rail, to rehearse without the board.
Errors end with exit code 1 and one line, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from app.cli import arguments
from app.cli.cmd_instruments import parse_options, serve_until_stopped


def register(sub: argparse._SubParsersAction) -> None:
    rails = sub.add_parser("rails", help="per-device DC rails: check a current-sensor board")
    actions = rails.add_subparsers(dest="rails_command", metavar="ACTION", required=True)
    read = actions.add_parser("read", help="scan the rails' channels and print device watts",
                              description="Open the DAQ, scan every channel the device file "
                              "wires, and print each channel's volts and each device's watts "
                              "± uncertainty, as a run computes them.")
    read.add_argument("--resource", required=True,
                      help="the DAQ's address, e.g. TCPIP::10.0.0.9::5025::SOCKET")
    read.add_argument("--devices", type=Path, required=True,
                      help="the device file: devices, rails, sensors, the DAQ's accuracy "
                           "(docs/instruments.md, 'Per-device DC rails')")
    read.add_argument("--count", type=arguments.whole_number(1, arguments.MAX_READINGS),
                      default=1, help="how many scans (default 1)")
    read.add_argument("--interval", type=arguments.bounded(0.01, 3600, "s"), default=1.0,
                      help="seconds between scans; refused when one scan takes longer")
    read.add_argument("--state", choices=("idle", "active", "max"),
                      help="the devices' state while scanned: compare each device's mean power "
                           "with its datasheet figure for that state")
    read.add_argument("--json", action="store_true", help="print the scans as JSON")
    read.add_argument("--option", action="append", default=[], metavar="K=V",
                      help="driver option (range_v=10, nplc=1, line_hz=50, switch_s=0.005)")
    read.set_defaults(func=read_command)
    sim = actions.add_parser("sim", help="a simulated DAQ for a device file, until Ctrl-C")
    sim.add_argument("--devices", type=Path, required=True, help="the device file")
    sim.add_argument("--amps", type=arguments.bounded(0, 6, "A"), default=0.5,
                     help="the steady current of every rail (default 0.5 A)")
    sim.add_argument("--port", type=arguments.tcp_port, default=0,
                     help="TCP port on 127.0.0.1 (0: any free)")
    sim.set_defaults(func=sim_command)


def read_command(args: argparse.Namespace) -> int:
    from app.metrics.rail_power import datasheet_check, device_power, scan_channels
    from app.station.device_file import DeviceFileError, load_device_file
    from drivers.clock import MonotonicClock
    from drivers.interfaces import InstrumentError
    from drivers.meters.rail_scan import DaqRailScanner

    clock = MonotonicClock()
    try:
        devices, daq = load_device_file(args.devices)
        channels = ",".join(str(c) for c in scan_channels(devices))
        scanner = DaqRailScanner(args.resource, channels=channels, **parse_options(args.option))
        scanner.check_period(args.interval)
        identity = scanner.open()
        try:
            t0 = clock.now()
            scans = []
            for k in range(args.count):
                clock.sleep_until(t0 + k * args.interval)
                scans.append(scanner.scan(clock.now() - t0))
        finally:
            scanner.close()
    except (DeviceFileError, InstrumentError) as exc:
        return arguments.refuse("rails read", exc, args)
    report: dict[str, Any] = {"identity": identity.describe(), "scans": [
        {"t_s": scan.t, "channels": {str(c): _number(v) for c, v in scan.as_mapping().items()},
         "flags": {str(c): sorted(f) for c, f in zip(scan.channels, scan.flags) if f},
         "devices": {d.slot: _watts(device_power(d, scan.as_mapping(), daq)) for d in devices}}
        for scan in scans]}
    checks = [datasheet_check(d, args.state, [device_power(d, scan.as_mapping(), daq)
                                              for scan in scans])
              for d in devices] if args.state else []
    report["datasheet"] = [{"slot": c.slot, "state": c.state, "datasheet_w": c.datasheet_w,
                            "measured_w": _number(c.measured_w),
                            "uncertainty_w": _number(c.uncertainty_w),
                            "exceeds_pct": c.exceeds_pct, "text": c.text()} for c in checks]
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"instrument: {report['identity']}")
    for scan in report["scans"]:
        volts = "  ".join(f"{c}: {'—' if v is None else f'{v:.5f} V'}"
                          for c, v in scan["channels"].items())
        print(f"t={scan['t_s']:.3f} s  {volts}")
        for slot, power in scan["devices"].items():
            text = "— (a channel flagged)" if power["watts"] is None else \
                f"{power['watts']:.3f} W ± {power['uncertainty_w']:.3f} W"
            print(f"    {slot}: {text}")
    for check in checks:
        print(f"datasheet: {check.text()}")
    return 0


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _watts(power: Any) -> dict[str, float | None]:
    return {"watts": _number(power.watts), "uncertainty_w": _number(power.uncertainty_w)}


def sim_command(args: argparse.Namespace) -> int:
    from app.metrics.rail_power import HallTransducer
    from app.station.device_file import DeviceFileError, load_device_file
    from drivers.simulators.rails import RailScannerSimulator

    try:
        devices, _daq = load_device_file(args.devices)
    except DeviceFileError as exc:
        return arguments.refuse("rails sim", exc, args)
    sim = RailScannerSimulator(port=args.port)
    for device in devices:
        for rail in device.rails:
            sensor = rail.sensor
            sim.set_channel(rail.current_channel,
                            sensor.offset_v + sensor.volts_per_amp * args.amps
                            if isinstance(sensor, HallTransducer) else args.amps * sensor.ohms)
            if rail.voltage_channel is not None:
                sim.set_channel(rail.voltage_channel, rail.nominal_v)
    try:
        port = sim.start()
    except OSError as exc:
        return arguments.refuse("rails sim", f"cannot listen on 127.0.0.1:{args.port}: {exc}",
                                args)
    return serve_until_stopped(sim, f"rail DAQ simulator on 127.0.0.1:{port}; read it with: "
                               f"storwatt rails read --resource {sim.resource} "
                               f"--devices {args.devices}")
