"""Every other table id of both papers, registered as not implemented yet, each with what is
missing (one line). An id moves out of here when a module of this package implements it."""

from __future__ import annotations

from ioa_synth.tables.registry import Needs, TableSpec, register

_UNKNOWN = ("not implemented: the toolkit's notes on the paper do not hold this table's rows and columns, so "
            "its layout could not be checked against the paper")

#: id -> (title, paper reference, needs, command, what is missing)
_IOA: dict[str, tuple[str, str, tuple[Needs, ...], str, str]] = {
    "ioa-4": ("IoA paper Table 4", "IoA paper, Table 4", (), "–", _UNKNOWN),
    "ioa-8": ("IoA paper Table 8", "IoA paper, Table 8", (), "–", _UNKNOWN),
    "ioa-25": ("IoA paper Table 25", "IoA paper, Table 25", (), "–", _UNKNOWN),
    "ioa-26": ("IoA paper Table 26", "IoA paper, Table 26", (), "–", _UNKNOWN),
    "ioa-27": ("IoA paper Table 27", "IoA paper, Table 27", (), "–", _UNKNOWN),
}

for _id, (_title, _ref, _needs, _command, _missing) in _IOA.items():
    register(TableSpec(_id, _title, _ref, _needs, _command, missing=_missing))
