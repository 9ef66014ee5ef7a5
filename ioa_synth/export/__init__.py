"""Publishing a build as a Hugging Face dataset: JSON-lines splits with nested features
(:mod:`.records`), a dataset card with the build's provenance (:mod:`.provenance`,
:mod:`.card`) and Croissant 1.0 metadata (:mod:`.croissant`); :func:`.run.export_build`
writes them. Needs the ``export`` extra (``datasets``, ``mlcroissant``)."""
