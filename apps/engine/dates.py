"""The period a query names by its date ("in May 2023", "on 11 August, 2023", "on September 1st,
2023"): what was said then is what it asks about (engine/rank.py lifts the hits said in it).

Only absolute dates with a year are read: a month alone or "last week" needs the asker's now and
calendar, and a year alone spans too much to say anything. Month names are the standard library's
(`calendar.month_name`, English in the C locale).
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTH = "(" + "|".join(_MONTHS) + ")"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)
# A day named is a week around it: what is said "on 11 August" was often said a few days before or after.
DAY_SPAN = timedelta(days=3)

Period = tuple[datetime, datetime]  # [start, end) in UTC


def _day(year: str, month: str, day: str) -> Period | None:
    try:
        named = datetime(int(year), _MONTHS[month.lower()], int(day), tzinfo=UTC)
        return named - DAY_SPAN, named + timedelta(days=1) + DAY_SPAN
    except (ValueError, OverflowError):  # 31 February; a week around 1 January 0001 or 31 December 9999
        return None


def query_period(text: str) -> Period | None:
    """The period the query's first absolute date names: its day give or take DAY_SPAN, or its
    month; None when it names none."""
    if found := _DAY_MONTH_YEAR.search(text):
        return _day(found[3], found[2], found[1])
    if found := _MONTH_DAY_YEAR.search(text):
        return _day(found[3], found[1], found[2])
    if found := _MONTH_YEAR.search(text):
        year, month = int(found[2]), _MONTHS[found[1].lower()]
        if not 1 <= year <= 9998:
            return None
        start = datetime(year, month, 1, tzinfo=UTC)
        return start, datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return None
