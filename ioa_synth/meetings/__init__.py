"""Live meetings (paper §6.2, App. D.5): probe a real meeting's pseudonymised transcript with
several detectors, collect every participant's blinded answers, validity labels and survey
on web pages, and compare the detectors per session and across sessions.

Modules: :mod:`.transcripts` (reading transcript formats), :mod:`.session` (the session folder,
pseudonymisation), :mod:`.probe` (question sets, blinding), :mod:`.forms` (the participants'
forms and their rules), :mod:`.web` (the answer pages), :mod:`.exchange` (forms as files),
:mod:`.report`, :mod:`.pooled` (merge judge) and :mod:`.render` (tables, Markdown).
"""

from pathlib import Path

from ioa_synth.core.templates import register_templates

register_templates("meetings", Path(__file__).resolve().parent / "templates")  # its prompts: meetings/<file>.jinja2
