"""Outcome consistency of a re-run (paper Table 14, order sensitivity), and the agreement of
a run's simulator rollouts with their modal answer (paper Table 13, :func:`rollout_agreement`).

When run B repeats run A on the same data with another ``--permute-seed`` (question and
option order) or another ``--rollouts``, each question of a case is matched to the same
question of the other run by its ``key`` (sha1 of stem + options, so independent of order),
and we count how many keep their divergent/non-divergent outcome and each participant's
chosen option (answers are stored in the prober's original option order).
"""

from __future__ import annotations

from typing import Any, Iterable

from ioa_synth.evaluate.analysis.results import Question, Record, Results


def rerun_kind(a: Results, b: Results) -> tuple[str | None, str]:
    """Whether B is a re-run of A: ``(kind, why)``. ``kind`` is ``"permute_seed"``,
    ``"rollouts"``, ``"permute_seed+rollouts"`` or ``None``; ``why`` says what was compared.

    Same data means equal ``fingerprint_parts.inputs`` when both runs record them, else
    equal ``args.data``; mode and access must also be equal."""
    ra, rb = a.run.settings, b.run.settings
    ia, ib = a.run.fingerprint_parts.get("inputs"), b.run.fingerprint_parts.get("inputs")
    da, db = a.run.args.get("data"), b.run.args.get("data")
    same_data = ia == ib if ia and ib else (da is not None and da == db)
    if not same_data:
        return None, "the two runs read different data"
    if (ra.mode, ra.access) != (rb.mode, rb.access):
        return None, f"mode/access differ ({ra.mode}/{ra.access} vs {rb.mode}/{rb.access})"
    kinds = [name for name, x, y in (("permute_seed", ra.permute_seed, rb.permute_seed),
                                     ("rollouts", ra.rollouts, rb.rollouts)) if x != y]
    if not kinds:
        return None, "same data, permute seed and rollouts"
    def show(value: object) -> str:
        return "none" if value is None else str(value)

    changes = ", ".join(f"{k} {show(getattr(ra, k))} -> {show(getattr(rb, k))}" for k in kinds)
    return "+".join(kinds), f"same data, {changes}"


def _by_key(questions: list[Question]) -> dict[tuple[str, int], Question]:
    """Questions keyed by (key, occurrence): a key asked twice pairs first with first."""
    seen: dict[str, int] = {}
    out = {}
    for q in questions:
        n = seen.get(q.key, 0)
        seen[q.key] = n + 1
        out[(q.key, n)] = q
    return out


def outcome_consistency(a: dict[str, Record], b: dict[str, Record], case_ids: list[str]) -> dict[str, Any]:
    """Match the questions of each case in ``case_ids`` (present in both ``a`` and ``b``) by key.

    Returns ``{matched, only_a, only_b, outcome_unchanged, answers_unchanged: {participant:
    share}, divergent_kept, attributed_kept, changed: [{case_id, key, number_a, number_b,
    divergent_a, divergent_b}]}``: counts of matched questions and of questions found in one
    run only; shares (0-1, ``None`` without a matched question) of matched questions whose
    divergent flag, resp. the participant's chosen option, is unchanged; and the questions
    whose outcome changed. ``divergent_kept`` = ``{before, kept, share}``: matched questions
    divergent in A, and how many are still divergent in B; ``attributed_kept`` = ``{before,
    kept, same_ma, share, share_same_ma}``: matched questions divergent and attributed in A
    (Category A), how many are Category A in B, and how many of those to the same MA (Table
    14's "divergent and attributed after permutation" when B permutes A's questions)."""
    matched = only_a = only_b = unchanged = 0
    div = [0, 0]
    att = [0, 0, 0]
    same_answer: dict[str, list[int]] = {}
    changed = []
    for cid in case_ids:
        qa, qb = _by_key(a[cid].questions), _by_key(b[cid].questions)
        only_a += len(qa.keys() - qb.keys())
        only_b += len(qb.keys() - qa.keys())
        for k in sorted(qa.keys() & qb.keys(), key=lambda k: qa[k].number):
            x, y = qa[k], qb[k]
            matched += 1
            unchanged += x.divergent == y.divergent
            if x.divergent:
                div[0] += 1
                div[1] += bool(y.divergent)
            if x.category == "A":
                att[0] += 1
                att[1] += y.category == "A"
                att[2] += y.category == "A" and y.ma_id == x.ma_id
            if x.divergent != y.divergent:
                changed.append({"case_id": cid, "key": x.key, "number_a": x.number, "number_b": y.number,
                                "divergent_a": x.divergent, "divergent_b": y.divergent})
            xa, ya = x.answers or {}, y.answers or {}  # direct-mode items have none
            for who in sorted(xa.keys() | ya.keys()):
                s = same_answer.setdefault(who, [0, 0])
                s[0] += who in xa and who in ya and xa[who].option == ya[who].option
                s[1] += 1
    return {"matched": matched, "only_a": only_a, "only_b": only_b,
            "outcome_unchanged": unchanged / matched if matched else None,
            "answers_unchanged": {who: s / n for who, (s, n) in same_answer.items()},
            "divergent_kept": {"before": div[0], "kept": div[1], "share": div[1] / div[0] if div[0] else None},
            "attributed_kept": {"before": att[0], "kept": att[1], "same_ma": att[2],
                                "share": att[1] / att[0] if att[0] else None,
                                "share_same_ma": att[2] / att[0] if att[0] else None},
            "changed": changed}


def rollout_agreement(records: Iterable[Record]) -> dict[str, dict[str, Any]]:
    """Simulator stability (paper App. C.1, Table 13: k rollouts agree with the modal answer,
    per participant P1/P2): for each participant (``M1``, ``M2``, ... ``MN`` in a meeting of
    N people), over every answer of the
    ``records``' questions, ``{answers, picks, agreeing, agreement}``: the answers, the
    rollout picks in all, the picks equal to the answer's modal option, and their share
    (pooled over picks, 0-1; ``None`` without a pick). With the same k for every answer this
    is the mean of the answers' ``consistency``. Questions without answers (``direct`` items)
    count in none."""
    out: dict[str, list[int]] = {}
    for rec in records:
        for q in rec.questions:
            for who, ans in sorted((q.answers or {}).items()):
                c = out.setdefault(who, [0, 0, 0])
                c[0] += 1
                c[1] += len(ans.rollouts)
                c[2] += sum(pick == ans.option for pick in ans.rollouts)
    return {who: {"answers": n, "picks": picks, "agreeing": agree, "agreement": agree / picks if picks else None}
            for who, (n, picks, agree) in sorted(out.items())}
