"""Counts in user-facing messages: ``1 case``, ``2 cases``, never ``1 cases`` (the one
helper; a message says its count through :func:`plural`)."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` (with thousands separators) and ``noun`` in the number ``n`` asks for:
    ``plural(1, "case")`` is ``"1 case"``, ``plural(0, "case")`` is ``"0 cases"``;
    ``many`` gives an irregular plural (``plural(n, "reply", "replies")``)."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"
