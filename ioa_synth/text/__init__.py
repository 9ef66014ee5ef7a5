"""Text handling shared by every part of the toolkit: the one token normaliser
(:mod:`ioa_synth.text.normalise`)."""
