"""ioa-synth: build, audit and evaluate benchmarks of hidden disagreement in collaborative dialogue."""

__version__ = "0.1.0"
