"""``python -m ioa_synth`` runs the ``ioa-synth`` command line."""

from ioa_synth.cli import main

main()
