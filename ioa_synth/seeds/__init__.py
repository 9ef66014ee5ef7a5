"""Seed papers for the IoA-Suite protocol (domain, task type, one real paper): fetch, import, assign, check.

- :mod:`.fetch` with :mod:`.arxiv_source`, :mod:`.pmc_source`, :mod:`.openalex_source`
  fetches paper records (``seeds fetch``); :mod:`.records` keeps the resumable log.
- :mod:`.importer` loads a JSONL snapshot (``seeds import``) into :mod:`.store`'s
  ``papers`` table, merging records of the same paper (identities in :mod:`.ids`).
- :mod:`.assign` draws disjoint per-split seed pools (``seeds assign``), :mod:`.check`
  reports leakage (``seeds check``), :mod:`.pool` hands a split's pool to ``build``.
"""
