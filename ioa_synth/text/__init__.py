"""Text handling shared by every part of the toolkit: the one token normaliser
(:mod:`ioa_synth.text.normalise`), counts in messages (:mod:`ioa_synth.text.plural`) and
decoding input files as UTF-8 (:mod:`ioa_synth.text.utf8`)."""
