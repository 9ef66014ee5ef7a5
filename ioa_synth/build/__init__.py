"""``ioa-synth build`` and the commands over a build directory: the two-stage loop
(:mod:`.pipeline`, its stages :mod:`.stages`), the run (:mod:`.run`), ``regenerate``,
``audit``, ``status``, ``show`` and the setup fingerprint (:mod:`.fingerprint`).

Importing the package registers the build's templates and their instructions
(:mod:`.prompts`)."""

from ioa_synth.build import prompts as _prompts  # noqa: F401 - registers the build's templates
