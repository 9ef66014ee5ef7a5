"""``ioa-synth build`` and the commands over a build directory (paper §3): the two-stage loop of
generator and judges (:mod:`.pipeline`, its stages :mod:`.stages`), the run (:mod:`.run`),
``regenerate``, ``audit``, ``status``, ``show`` and the setup fingerprint (:mod:`.fingerprint`).

Importing the package registers the build's templates and their instructions (:mod:`.prompts`)
and the build directory as a folder kind."""

from ioa_synth.build import prompts as _prompts  # noqa: F401 - registers the build's templates
from ioa_synth.build.run_settings import BuildSettings
from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

#: A build directory: its manifest is written by the first command that writes it (``build``
#: rewrites it with its settings). One written before build directories carried a manifest is
#: told by its catalog (build cases, seed tuples, imported or assigned seed papers, or runs
#: of commands no other folder kind claims) and migrated.
register_folder_kind("build", "an 'ioa-synth build' directory", commands=("build",), settings=BuildSettings,
                     layout=FolderLayout(tables=("cases", "seeds", "papers", "seed_pool"), other_commands=True))
