"""``ioa-synth evaluate``: the IoA-Suite evaluation protocol (PROTOCOL.md §6; paper §4.1-4.2,
App. C). Inputs (``inputs``), information access (``access``), solver-like steps
(``probers``, ``simulator``, ``validity``), reply shapes (``replies``), pure scoring
(``scoring``), per-case records with every call (``records``) and the resumable run
(``run``)."""
