"""Human annotation of a build (the paper's human study): a stratified, score-blind
sample exported as a Label Studio project or a CSV (:mod:`.sample`, :mod:`.forms`),
annotators' scores imported with strict checks (:mod:`.importer`), and the report
against the build judge with inter-annotator agreement (:mod:`.report`)."""

from ioa_synth.annotate.sample import AnnotationError

__all__ = ["AnnotationError"]
