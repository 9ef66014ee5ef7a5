"""Every other table id of both papers, registered as not implemented yet, each with what is
missing (one line). An id moves out of here when a module of this package implements it."""

from __future__ import annotations

from ioa_synth.tables.registry import Needs, TableSpec, register

_UNKNOWN = "its rows and columns are not in the project's protocol notes (PROTOCOL.md) yet"
_EVAL = "ioa-synth evaluate --data DATA/test --out RESULTS"

#: id -> (title, paper reference, needs, command, what is missing)
_IOA: dict[str, tuple[str, str, tuple[Needs, ...], str, str]] = {
    "ioa-2": ("Absolute P / R / F1 (second main table)", "IoA paper, Table 2", (Needs("evaluate"),), _EVAL, _UNKNOWN),
    "ioa-3": ("Absolute P / R / F1 (third main table)", "IoA paper, Table 3", (Needs("evaluate"),), _EVAL, _UNKNOWN),
    "ioa-4": ("IoA paper Table 4", "IoA paper, Table 4", (), "–", _UNKNOWN),
    "ioa-5": ("Prober training results and ablations (P / R / F1 / K)", "IoA paper, Table 5 (§6.1, §6.3)",
              (Needs("evaluate", 1, None, "one per trained prober or ablation"),), _EVAL,
              "row labels of the training ablations are not recorded in an evaluate folder; ioa-1 gives the same "
              "numbers per folder"),
    "ioa-8": ("IoA paper Table 8", "IoA paper, Table 8", (), "–", _UNKNOWN),
    "ioa-19": ("Absolute P / R / F1 (appendix)", "IoA paper, Table 19", (Needs("evaluate"),), _EVAL, _UNKNOWN),
    "ioa-25": ("IoA paper Table 25", "IoA paper, Table 25", (), "–", _UNKNOWN),
    "ioa-26": ("IoA paper Table 26", "IoA paper, Table 26", (), "–", _UNKNOWN),
    "ioa-27": ("IoA paper Table 27", "IoA paper, Table 27", (), "–", _UNKNOWN),
}

_BELIEF_RUN = "ioa-synth belief run --items ITEMS --out RESULTS"
_BELIEF_FIG4 = ("the axes of Fig. 4 (knowledge vs robustness: which knowledge measure, which robustness measure, per "
                "what unit) are not defined in the project's belief notes (BELIEF.md)")
_BELIEF: dict[str, tuple[str, str, tuple[Needs, ...], str, str]] = {
    "belief-fig4": ("Knowledge vs robustness", "belief paper, Fig. 4", (Needs("belief", 1, None),), _BELIEF_RUN,
                    _BELIEF_FIG4),
}

for _id, (_title, _ref, _needs, _command, _missing) in {**_IOA, **_BELIEF}.items():
    register(TableSpec(_id, _title, _ref, _needs, _command, missing=_missing))
