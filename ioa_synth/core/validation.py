"""The first problem of a pydantic :class:`~pydantic.ValidationError`, as the one ``error:``
line of a command reads it: where (the dotted path of the field) and what, without pydantic's
own prefixes ("Value error, ", "Field required")."""

from __future__ import annotations

from pydantic import ValidationError


def first_problem(exc: ValidationError, top: str = "") -> tuple[str, str]:
    """``(where, message)`` of the first error of ``exc``: ``where`` is the field's dotted
    path (``dialogue.turns.2.speaker_id``; ``top`` for the object itself), ``message`` is
    pydantic's without its ``"Value error, "`` prefix, and ``"missing field"`` for a field
    that is not there."""
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]) or top
    msg = "missing field" if err["type"] == "missing" else err["msg"].removeprefix("Value error, ")
    return where, msg


def more_problems(exc: ValidationError) -> str:
    """``" (and N more problem(s))"`` after the first when ``exc`` has more than one, else ``""``."""
    n = len(exc.errors()) - 1
    return f" (and {n} more problem(s))" if n > 0 else ""


def checked_count(value: int, low: int, high: int, flag: str, unit: str, usual: str) -> int:
    """``value`` when ``low <= value <= high`` (a count a command's ``flag`` takes).

    Raises:
        ValueError: any other number, with the sentence the command prints:
            ``"--meetings 9: give 1 to 5 meetings (1 is the paper's single meeting)"``,
            ``usual`` naming what ``low`` means.
    """
    if not low <= value <= high:
        raise ValueError(f"{flag} {value}: give {low} to {high} {unit} ({low} is {usual})")
    return value


__all__ = ["checked_count", "first_problem", "more_problems"]
