"""Near-duplicate cases: ``check`` finds a copy of a case with the members renamed (within
and across splits; exit 1 across), ``build --dedup`` discards a near-copy of an earlier
case with that reason, and a case rewritten in other words is not a near-duplicate."""

from __future__ import annotations

import json

from ioa_helpers import q

import pytest

from ioa_synth.build.dedup import NearDuplicateIndex, case_text, jaccard, shingles
from ioa_synth.testing.scripted_server import ProtocolResponder, chat_reply, request_kind, valid_stage1, valid_stage2

SWAP = {"Ada Okafor": "Malin Achterberg", "Ben Lindqvist": "Tomasz Wierzbicki"}


def _swap_names(text: str) -> str:
    for old, new in SWAP.items():
        text = text.replace(old, new).replace(old.split()[0], new.split()[0])
    return text


class NameSwapped:
    """Answers like :class:`ProtocolResponder`, with both members renamed everywhere."""

    def __init__(self) -> None:
        self.base = ProtocolResponder()

    def __call__(self, body, headers):
        reply = self.base(body, headers)
        if request_kind(body) in ("stage1_generator", "stage2_generator") and reply.status == 200:
            return chat_reply(_swap_names(reply.body["choices"][0]["message"]["content"]))
        return reply


def test_a_renamed_copy_has_the_same_content_and_a_rewrite_does_not():
    profiles, turns = valid_stage1(4), valid_stage2(6)["turns"]
    copy = json.loads(_swap_names(json.dumps({"p": profiles, "t": turns})))
    assert case_text(copy["p"], copy["t"]) == case_text(profiles, turns)
    other = json.loads(json.dumps({"p": profiles, "t": turns}))
    other["p"]["meeting_scenario"] = "A hospital pharmacist and a ward nurse review the new dosing chart."
    for p in other["p"]["misalignment_points"]:
        p["member_a_understanding"] = "a paediatric dose per kilogram as printed on the March chart"
        p["member_b_understanding"] = "the adult flat dose the pharmacy has dispensed since 2019"
        p["why_undetected"] = "both read the chart every day"
    for i, t in enumerate(other["t"]):
        t["utterance"] = f"Point {i}: the chart goes to the ward on Monday and we check it after the round."
    sim = jaccard(shingles(case_text(profiles, turns)), shingles(case_text(other["p"], other["t"])))
    assert sim < 0.3


@pytest.mark.parametrize("threshold", [0.96, 0.99, 1.0])
def test_thresholds_beyond_lsh_find_exactly_the_pairs_that_reach_them(threshold):
    """datasketch builds no LSH above ~0.95 (b < 2): those thresholds compare exactly."""
    profiles, turns = valid_stage1(4), valid_stage2(6)["turns"]
    base = shingles(case_text(profiles, turns))
    near = [dict(t) for t in turns]
    near[-1]["utterance"] += " Agreed, see you then."  # a few new shingles among many
    sim = jaccard(base, shingles(case_text(profiles, near)))
    assert 0.95 < sim < 0.99
    index = NearDuplicateIndex(threshold)
    assert index.add("test/a", "test", profiles, turns) is None
    copy = index.add("train/b", "train", profiles, turns)
    assert copy is not None and copy.a == "test/a" and copy.similarity == 1.0 and copy.cross_split
    found = index.add("val/c", "val", profiles, near)
    assert (found is not None) == (sim >= threshold)
    assert index.add("val/d", "val", valid_stage1(3), valid_stage2(4)["turns"]) is None


@pytest.mark.parametrize("threshold", [None, "1.0"])
def test_check_finds_a_renamed_copy_across_splits(cli, endpoint, seeds_file, tmp_path, monkeypatch, threshold):
    out = tmp_path / "out"
    endpoint()
    seeds = [json.loads(line) for line in seeds_file(2).read_text().splitlines()]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(seeds[0]) + "\n")
    b.write_text(json.dumps(seeds[1]) + "\n")
    assert cli("build", "--seeds", a, "--split", "test", "--out", out).exit_code == 0
    limit = ("--threshold", threshold) if threshold else ()
    res = cli("check", "--out", out, *limit)
    assert res.exit_code == 0 and "0 pair(s)" in res.stdout
    endpoint(responder=NameSwapped())  # the train case: the same case with the members renamed
    assert cli("build", "--seeds", b, "--split", "train", "--out", out).exit_code == 0
    names = {n for (n,) in q(out, "SELECT path FROM cases")}
    assert any("Malin" in open(p).read() for p in names)
    res = cli("check", "--out", out, "--json", *limit)
    assert res.exit_code == 1
    report = json.loads(res.stdout)
    (pair,) = report["pairs"]
    assert {pair["a"].split("/")[0], pair["b"].split("/")[0]} == {"test", "train"}
    assert pair["similarity"] == 1.0 and pair["cross_split"] and report["cross_split"] == 1
    table = cli("check", "--out", out, *limit)
    assert table.exit_code == 1 and "ACROSS" in table.stdout
    if threshold:  # export at 1.0 counts the same pair in its card
        res = cli("export", "--out", out, "--to", tmp_path / "hub", *limit)
        assert res.exit_code == 0, res.output
        assert "Jaccard ≥ 1.0: 1 pair(s), 1 spanning two splits" in (tmp_path / "hub" / "README.md").read_text()


def test_check_within_one_split_exits_zero(cli, endpoint, seeds_file, tmp_path):
    out = tmp_path / "out"
    endpoint()
    assert cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", out).exit_code == 0
    res = cli("check", "--out", out, "--json")
    assert res.exit_code == 0
    (pair,) = json.loads(res.stdout)["pairs"]
    assert not pair["cross_split"]


def test_check_of_a_build_without_accepted_cases_says_so_instead_of_an_empty_table(cli, endpoint, seeds_file,
                                                                                      tmp_path):
    # a new user's demo build accepted nothing: check printed a "(none)" table of "0 accepted cases"
    out = tmp_path / "out"
    endpoint({"stage1_judge": ["low"] * 4})
    assert cli("build", "--seeds", seeds_file(1), "--split", "test", "--out", out).exit_code == 0
    res = cli("check", "--out", out)
    assert res.exit_code == 0 and "no accepted case to compare yet" in res.stdout and "(none)" not in res.stdout
    assert json.loads(cli("check", "--out", out, "--json").stdout)["accepted_cases"] == 0
    # and status ends with what to do next
    status = cli("status", "--out", out).stdout
    assert status.rstrip().splitlines()[-1].startswith("No case was accepted: the discard reasons above say why")


def test_check_of_a_missing_build_is_one_error_line(cli, tmp_path):
    res = cli("check", "--out", tmp_path / "nothing")
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and res.stderr.count("\n") == 1


@pytest.mark.parametrize("threshold", [None, "1.0"])
def test_build_dedup_discards_a_near_copy_of_an_earlier_case(cli, endpoint, seeds_file, tmp_path, threshold):
    out = tmp_path / "out"
    endpoint(responder=NameSwapped())
    limit = ("--threshold", threshold) if threshold else ()
    res = cli("build", "--seeds", seeds_file(2), "--split", "test", "--out", out, "--workers", "1", "--dedup", *limit)
    assert res.exit_code == 0, res.output
    rows = q(out, "SELECT case_id, status, discard_reason, path FROM cases ORDER BY case_id")
    statuses = sorted(r[1] for r in rows)
    assert statuses == ["accepted", "discarded"]
    first = next(r for r in rows if r[1] == "accepted")
    dup = next(r for r in rows if r[1] == "discarded")
    assert dup[2].startswith(f"near-duplicate of {first[0]} (Jaccard 1.00") and dup[3] is None
    report = json.loads(cli("status", "--out", out, "--json").stdout)
    assert report["discards"]["test"]["discarded"] == {"near-duplicate": 1}
    # a re-run keeps the decision and an export-free check sees one accepted case only
    assert cli("check", "--out", out, *limit).exit_code == 0


SWAP_THREE = {"Ada Okafor": "Malin Achterberg", "Ben Lindqvist": "Tomasz Wierzbicki",
              "Chiara Zanetti": "Oluwaseun Adeyemi"}
#: what the first speaker adds to the three-person scripted dialogue: the third member by name
TO_THIRD = " Chiara, does that work for your customers?"


def _swap_three(text: str) -> str:
    for old, new in SWAP_THREE.items():
        text = text.replace(old, new).replace(old.split()[0], new.split()[0])
    return text


class ThirdNamed:
    """Answers like :class:`~ioa_synth.testing.scripted_multi.MultiResponder`; the first turn
    names the third member (:data:`TO_THIRD`), and with ``renamed`` all three members are
    renamed everywhere."""

    def __init__(self, renamed: bool) -> None:
        from ioa_synth.testing.scripted_multi import MultiResponder

        self.base, self.renamed = MultiResponder(), renamed

    def __call__(self, body, headers):
        reply = self.base(body, headers)
        kind = request_kind(body)
        if kind not in ("stage1_generator", "stage2_generator") or reply.status != 200:
            return reply
        data = json.loads(reply.body["choices"][0]["message"]["content"])
        if kind == "stage2_generator":
            data["turns"][0]["utterance"] += TO_THIRD
        text = json.dumps(data)
        return chat_reply(_swap_three(text) if self.renamed else text)


def test_a_three_person_copy_with_every_member_renamed_has_the_same_content():
    from ioa_synth.testing.scripted_multi import valid_stage1_multi, valid_stage2_multi

    profiles, turns = valid_stage1_multi(), valid_stage2_multi()["turns"]
    turns[0]["utterance"] += TO_THIRD
    text = case_text(profiles, turns)
    assert "Chiara" not in text and "M3, does that work" in text  # the third member's name is an id too
    copy = json.loads(_swap_three(json.dumps({"p": profiles, "t": turns})))
    assert "Oluwaseun, does that work" in json.dumps(copy) and case_text(copy["p"], copy["t"]) == text


def test_check_finds_a_three_person_copy_with_every_member_renamed(cli, endpoint, seeds_file, tmp_path):
    out = tmp_path / "out"
    seeds = [json.loads(line) for line in seeds_file(2).read_text().splitlines()]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(seeds[0]) + "\n")
    b.write_text(json.dumps(seeds[1]) + "\n")
    common = ("--out", out, "--participants", "3", "--type-mix", "none", "--workers", "1")
    endpoint(responder=ThirdNamed(renamed=False))
    assert cli("build", "--seeds", a, "--split", "test", *common).exit_code == 0
    endpoint(responder=ThirdNamed(renamed=True))
    assert cli("build", "--seeds", b, "--split", "train", *common).exit_code == 0
    records = [json.loads(open(p, encoding="utf-8").read()) for (p,) in q(out, "SELECT path FROM cases "
                                                                             "WHERE status = 'accepted'")]
    utterances = sorted(r["dialogue"]["turns"][0]["utterance"] for r in records)
    assert len(records) == 2 and "Chiara, does" in utterances[0] and "Oluwaseun, does" in utterances[1]
    res = cli("check", "--out", out, "--json")
    assert res.exit_code == 1, res.output
    (pair,) = json.loads(res.stdout)["pairs"]
    assert pair["similarity"] == 1.0 and pair["cross_split"]
