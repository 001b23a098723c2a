"""An instrument's calibration, as the lab enters it: a date and a certificate reference.

Meters do not report their calibration, so the lab types it, and a typo must be caught where
it is typed, not in the verdict of a run hours later (method-notes §3: instruments calibrated
within the method's limit). One rule, one text, used by the command line, the wizard and a SUT
or station file alike: a date is ISO ``YYYY-MM-DD`` and not after today (a calibration cannot
have happened in the future); empty means "not entered" (the verdict then says so).
"""

from __future__ import annotations

from datetime import date

from app.core import plain_text

#: the one refusal text of each rule (``{what}`` names the instrument, ``{text}`` the entry)
NOT_A_DATE = "{what} calibration date {text!r} is not a date YYYY-MM-DD (e.g. 2026-03-01)"
IN_THE_FUTURE = ("{what} calibration date {when} is after today ({today}): enter the date on "
                 "the calibration certificate")
#: a certificate reference longer than this is a paste accident (stored as TEXT anyway)
MAX_CERTIFICATE_CHARS = 200
CERTIFICATE_TOO_LONG = ("{what} calibration certificate reference is {n} characters; at most "
                        f"{MAX_CERTIFICATE_CHARS}")


class CalibrationEntryError(ValueError):
    """A calibration date or certificate the station refuses at entry."""


def checked_date(text: str, what: str = "the instrument's", today: date | None = None) -> str:
    """``text`` as an ISO date string ("" stays ""), or :class:`CalibrationEntryError`."""
    text = text.strip()
    if not text:
        return ""
    try:
        when = date.fromisoformat(text)
    except ValueError:
        raise CalibrationEntryError(NOT_A_DATE.format(what=what, text=text[:40])) from None
    today = today or date.today()
    if when > today:
        raise CalibrationEntryError(IN_THE_FUTURE.format(what=what, when=when, today=today))
    return when.isoformat()


def checked_certificate(text: str, what: str = "the instrument's") -> str:
    """A certificate reference as typed (trimmed, one line), or :class:`CalibrationEntryError`."""
    text = " ".join(text.split())
    why = plain_text.refusal(text, f"{what} certificate reference")
    if why is not None:
        raise CalibrationEntryError(why)
    if len(text) > MAX_CERTIFICATE_CHARS:
        raise CalibrationEntryError(CERTIFICATE_TOO_LONG.format(what=what, n=len(text)))
    return text


def describe(calibration_date: str, certificate: str) -> str:
    """``2026-03-01 (certificate CAL-123)`` as a report prints it; ``—`` when neither."""
    if not calibration_date and not certificate:
        return "—"
    return (calibration_date or "date not entered") + (
        f" (certificate {certificate})" if certificate else "")
