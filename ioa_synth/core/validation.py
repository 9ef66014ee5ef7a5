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


__all__ = ["first_problem", "more_problems"]
