"""``ioa-synth table ID RESULTS...``: the tables of both papers, rendered from results folders.

Tables are views of what the capabilities' reports compute (evaluate report/compare, meeting
report, collab report, ...), never new computations. :mod:`.registry` holds every table id
(``ioa-1`` … ``ioa-27`` for the IoA paper, ``belief-N`` / ``belief-figN`` for the belief
study): its title, paper reference, the folders it needs, the command that makes them and,
once implemented, the function from the read folders to a :class:`.model.PaperTable`.
:mod:`.formats` renders one as a terminal table, Markdown, CSV or LaTeX.
"""

import ioa_synth.belief  # noqa: F401  (folder kinds named in the needs)
import ioa_synth.build  # noqa: F401
import ioa_synth.train  # noqa: F401  (the 'sft' folder kind)
from ioa_synth.tables import belief_reask, belief_tables, ioa_baselines, ioa_evaluate, ioa_quality, ioa_studies, unimplemented  # noqa: F401  (each registers its ids)
from ioa_synth.tables import ioa_settings, ioa_training  # noqa: F401  (ioa-7, ioa-15; ioa-17, ioa-18)
from ioa_synth.tables import belief_fig4, ioa_absolute  # noqa: F401,E402  (absolute P/R/F1, Table 5, Fig. 4)
