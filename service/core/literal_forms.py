"""Canonical literals: each literal of a datatype with rules here replaced by the canonical literal of its value,
in plain Python and not by any store (stores keep values, not spellings, and give them back each in its own
form). :mod:`.digest` digests graphs over these, so a digest does not depend on the store read. The rules:

- numbers are canonical by their value: every literal of ``xsd:decimal`` or a type derived from it
  (``xsd:integer``, ``xsd:int``, ``xsd:nonNegativeInteger``, …) as ``xsd:decimal`` in the XSD 1.1
  canonical form (``"10"``, ``"-0.5"``: no exponent, no sign on zero or positives, no leading or
  trailing zeros, no decimal point for an integral value), so ``"10"^^xsd:integer`` and
  ``"10.0"^^xsd:decimal`` have one canonical literal; ``xsd:double`` and ``xsd:float`` as ``xsd:double`` in the
  XSD 1.1 canonical form (``"1.0E3"``: shortest digits that read back as the same double, one
  digit before the point; ``INF``, ``-INF``, ``NaN``, ``0.0E0``, ``-0.0E0``), a float by its exact
  (binary32) value;
- ``xsd:boolean`` as ``true`` or ``false``;
- ``xsd:dateTime`` (and ``xsd:dateTimeStamp``, as ``xsd:dateTime``) and ``xsd:time`` with a
  timezone as the same instant in UTC with ``Z``, ``24:00:00`` as ``00:00:00`` of the next day,
  fractional seconds without trailing zeros; ``xsd:date`` and the ``xsd:g…`` types keep their
  timezone, written ``Z`` when it is zero; durations as XSD 1.1's canonical duration
  (``"PT36H"`` → ``"P1DT12H"``);
- language tags in lower case; ``xsd:string`` literals are plain literals anyway.

A literal whose lexical form is not in its datatype's lexical space, and a literal of any other
datatype, stays as written. Two leniencies, both Oxigraph's, so that what Oxigraph returns digests as
what was written (:mod:`.digest`): ``inf``, ``infinity`` and ``nan`` in any case, with a sign, read as ``INF``,
``-INF`` and ``NaN``; range facets of the derived integer types are not checked (``"300"^^xsd:byte``
digests as 300: Oxigraph keeps it as ``"300"^^xsd:integer``).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from decimal import Decimal

from pyoxigraph import Literal, NamedNode

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"

_DECIMAL_TYPES = frozenset(
    XSD + name
    for name in (
        "decimal",
        "integer",
        "nonPositiveInteger",
        "negativeInteger",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
        "positiveInteger",
    )
)

_DECIMAL_RE = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?")
_DOUBLE_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_SPECIAL_DOUBLES = frozenset(("inf", "infinity", "nan"))
"""XSD's ``INF`` and ``NaN`` with an optional sign, and the spellings Oxigraph also reads as them (any case)."""
_TZ = r"(Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?"
_YEAR = r"(-?(?:[1-9]\d{3,}|0\d{3}))"
_DATE_TIME_RE = re.compile(
    _YEAR + r"-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T"
    r"(?:([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d+))?|(24):00:00(?:\.(0+))?)" + _TZ
)
_TIME_RE = re.compile(r"(?:([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d+))?|(24):00:00(?:\.(0+))?)" + _TZ)
_DATE_RE = re.compile(_YEAR + r"-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])" + _TZ)
_G_RE = {
    XSD + "gYear": re.compile(r"(-?(?:[1-9]\d{3,}|0\d{3}))" + _TZ),
    XSD + "gYearMonth": re.compile(r"(-?(?:[1-9]\d{3,}|0\d{3})-(?:0[1-9]|1[0-2]))" + _TZ),
    XSD + "gMonth": re.compile(r"(--(?:0[1-9]|1[0-2]))" + _TZ),
    XSD + "gDay": re.compile(r"(---(?:0[1-9]|[12]\d|3[01]))" + _TZ),
    XSD + "gMonthDay": re.compile(r"(--(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))" + _TZ),
}
_DURATION_RE = re.compile(
    r"(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d*)?|\.\d+)S)?)?"
)
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

Canonical = tuple[str, str] | None
"""A canonical lexical form and its datatype IRI; None for a lexical form not in the lexical space."""


def _decimal(text: str, datatype: str) -> Canonical:
    match = _DECIMAL_RE.fullmatch(text)
    if match is None:
        return None
    sign, whole, fraction = match.groups()
    if fraction is not None and datatype != XSD + "decimal" or not (whole or fraction):
        return None
    whole, fraction = whole.lstrip("0") or "0", (fraction or "").rstrip("0")
    body = f"{whole}.{fraction}" if fraction else whole
    return ("-" + body if sign == "-" and body != "0" else body), XSD + "decimal"


def _double_form(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    sign = "-" if str(value).startswith("-") else ""
    if value == 0:
        return sign + "0.0E0"
    decimal = Decimal(repr(abs(value)))
    text = "".join(map(str, decimal.as_tuple().digits)).rstrip("0")
    exponent = decimal.adjusted()  # the exponent with one digit before the point
    return f"{sign}{text[0]}.{text[1:] or '0'}E{exponent}"


def _double(text: str, datatype: str) -> Canonical:
    if not _DOUBLE_RE.fullmatch(text) and text.lstrip("+-").lower() not in _SPECIAL_DOUBLES:
        return None
    value = float(text)
    if datatype == XSD + "float" and not math.isnan(value):
        try:
            value = struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            value = float("inf") if value > 0 else float("-inf")
    return _double_form(value), XSD + "double"


def _boolean(text: str, datatype: str) -> Canonical:
    if text in ("true", "1"):
        return "true", datatype
    if text in ("false", "0"):
        return "false", datatype
    return None


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 is 1 BCE, as in XSD 1.1)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _valid_day(year: int, month: int, day: int) -> bool:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _MONTH_DAYS[month - 1] and not (month == 2 and day == 29 and not leap)


def _offset(tz: str) -> int:
    """A timezone's offset from UTC in minutes."""
    return 0 if tz == "Z" else (1 if tz[0] == "+" else -1) * (int(tz[1:3]) * 60 + int(tz[4:6]))


def _tz_form(tz: str | None) -> str:
    return "" if tz is None else "Z" if _offset(tz) == 0 else tz


def _year_form(year: int) -> str:
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def _seconds_form(seconds: str, fraction: str | None) -> str:
    fraction = (fraction or "").rstrip("0")
    return f"{seconds}.{fraction}" if fraction else seconds


def _date_time(text: str, datatype: str) -> Canonical:
    match = _DATE_TIME_RE.fullmatch(text)
    if match is None:
        return None
    year_text, month, day, hour, minute, seconds, fraction, midnight, _, tz = match.groups()
    year = int(year_text)
    if not _valid_day(year, int(month), int(day)):
        return None
    minutes = 24 * 60 if midnight else int(hour) * 60 + int(minute)
    if midnight:
        seconds, fraction = "00", None
    if tz is not None:
        minutes -= _offset(tz)
    days, minutes = divmod(minutes, 24 * 60)
    year, m, d = _civil_from_days(_days_from_civil(year, int(month), int(day)) + days)
    second = _seconds_form(seconds, fraction)
    return (
        f"{_year_form(year)}-{m:02d}-{d:02d}T{minutes // 60:02d}:{minutes % 60:02d}:{second}{'' if tz is None else 'Z'}"
    ), XSD + "dateTime"


def _time(text: str, datatype: str) -> Canonical:
    match = _TIME_RE.fullmatch(text)
    if match is None:
        return None
    hour, minute, seconds, fraction, midnight, _, tz = match.groups()
    minutes = 0 if midnight else int(hour) * 60 + int(minute)
    if midnight:
        seconds, fraction = "00", None
    if tz is not None:
        minutes = (minutes - _offset(tz)) % (24 * 60)
    second = _seconds_form(seconds, fraction)
    return f"{minutes // 60:02d}:{minutes % 60:02d}:{second}{'' if tz is None else 'Z'}", datatype


def _date(text: str, datatype: str) -> Canonical:
    match = _DATE_RE.fullmatch(text)
    if match is None or not _valid_day(int(match[1]), int(match[2]), int(match[3])):
        return None
    return f"{match[1]}-{match[2]}-{match[3]}{_tz_form(match[4])}", datatype


def _gregorian(text: str, datatype: str) -> Canonical:
    match = _G_RE[datatype].fullmatch(text)
    if match is None:
        return None
    if datatype == XSD + "gMonthDay" and int(match[1][5:]) > _MONTH_DAYS[int(match[1][2:4]) - 1]:
        return None
    return match[1] + _tz_form(match[2]), datatype


def _duration(text: str, datatype: str) -> Canonical:
    match = _DURATION_RE.fullmatch(text)
    if match is None or text.endswith(("P", "T")):
        return None
    negative, years, months, days, hours, minutes, seconds = match.groups()
    if datatype == XSD + "yearMonthDuration" and (days or hours or minutes or seconds):
        return None
    if datatype == XSD + "dayTimeDuration" and (years or months):
        return None
    total_months = int(years or 0) * 12 + int(months or 0)
    total_seconds = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60 + Decimal(seconds or 0)
    if not total_months and not total_seconds:
        return ("P0M" if datatype == XSD + "yearMonthDuration" else "PT0S"), datatype
    y, mo = divmod(total_months, 12)
    d, rest = divmod(total_seconds, 86400)
    h, rest = divmod(rest, 3600)
    mi, s = divmod(rest, 60)
    date_part = (f"{y}Y" if y else "") + (f"{mo}M" if mo else "") + (f"{int(d)}D" if d else "")
    second = _decimal(format(s, "f"), XSD + "decimal") if s else None
    time_part = (f"{int(h)}H" if h else "") + (f"{int(mi)}M" if mi else "") + (f"{second[0]}S" if second else "")
    return f"{'-' if negative else ''}P{date_part}{'T' + time_part if time_part else ''}", datatype


_CANONICAL: dict[str, Callable[[str, str], Canonical]] = {
    **{datatype: _decimal for datatype in _DECIMAL_TYPES},
    XSD + "double": _double,
    XSD + "float": _double,
    XSD + "boolean": _boolean,
    XSD + "dateTime": _date_time,
    XSD + "dateTimeStamp": _date_time,
    XSD + "time": _time,
    XSD + "date": _date,
    **{datatype: _gregorian for datatype in _G_RE},
    XSD + "duration": _duration,
    XSD + "yearMonthDuration": _duration,
    XSD + "dayTimeDuration": _duration,
}


def canonical_literal(literal: Literal) -> Literal:
    """The canonical literal of the same value (the rules are in this module's description); the literal
    itself when it is already canonical, ill-typed, or of a datatype without rules here."""
    language = literal.language
    if language is not None:
        lower = language.lower()
        return literal if language == lower else Literal(literal.value, language=lower)
    datatype = literal.datatype.value
    rule = _CANONICAL.get(datatype)
    if rule is None:
        return literal
    canonical = rule(literal.value, datatype)
    if canonical is None or canonical == (literal.value, datatype):
        return literal
    return Literal(canonical[0], datatype=NamedNode(canonical[1]))
