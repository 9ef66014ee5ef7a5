"""Building the IoA-Suite benchmark (paper §3): seed tuples of a split through the two-stage
loop of generator and judges (:mod:`.pipeline`, :mod:`.run`), regeneration (:mod:`.regenerate`),
audit (:mod:`.audit`), and the build directory's status and cases (:mod:`.status`, :mod:`.show`)."""

from ioa_synth.runs.folder_kinds import register_folder_kind

#: A build directory: its catalog holds build cases, seed tuples, imported or assigned seed
#: papers, or runs of commands no other folder kind claims.
register_folder_kind("build", "an 'ioa-synth build' directory", tables=("cases", "seeds", "papers", "seed_pool"),
                     other_commands=True)
