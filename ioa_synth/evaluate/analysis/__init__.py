"""Analyses of ``ioa-synth evaluate`` results folders.

- :mod:`.results`: the one reader of a results folder (``run.json``, ``summary.json``,
  ``records/<domain>/<case>.json``), validated with pydantic.
- :mod:`.bootstrap`: paired bootstrap over dialogues (paper App. D.3).
- :mod:`.tables`: per-type recall (Table 12), Category-C breakdown (§E.2), per-group means.
- :mod:`.consistency`: per-question outcome consistency of a re-run (Table 14).
- :mod:`.compare` / :mod:`.report`: the ``compare`` and ``report`` commands' contents.
- :mod:`.render`: the same tables as rich tables, Markdown, and a matplotlib bar chart.
"""
