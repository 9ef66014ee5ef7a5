"""Text handling shared by every part of the toolkit: the one token normaliser
(:mod:`ioa_synth.text.normalise`) and counts in messages (:mod:`ioa_synth.text.plural`)."""
