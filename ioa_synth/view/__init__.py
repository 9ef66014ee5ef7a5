"""``ioa-synth view``: a local, read-only web viewer of results folders of every kind (build,
evaluate, belief, collab, meeting session, export, reward), after inspect_ai's ``inspect
view``. Server-rendered pages (starlette + uvicorn, jinja2 with autoescape), usable without
JavaScript, every asset packaged.

Modules: :mod:`.read` (reading the folders, never writing them: the catalog through a copy),
:mod:`.app` (the routes), :mod:`.pages` (the page of each kind), :mod:`.server` (port, host,
serving).
"""

from pathlib import Path

from ioa_synth.core.templates import register_templates

#: The page templates (HTML, ``view/<file>.html``) and the packaged CSS and script.
TEMPLATES = Path(__file__).resolve().parent / "templates"
STATIC = Path(__file__).resolve().parent / "static"

register_templates("view", TEMPLATES)
