"""The toolkit's statistics, shared by every study: the paired percentile bootstrap over
dialogues and its p-value (:mod:`.bootstrap`, paper App. D.3), the exact paired sign-flip
permutation test and the smallest p each can give (:mod:`.permutation`), and the pooled
ratio with its bootstrap interval over items (:func:`.bootstrap.ratio_with_ci`, the belief
study's FPI and rates), and the agreement statistics of the quality audit and the human
study (:mod:`.agreement`: Krippendorff's alpha, Cohen's kappa, App. B.3). Each wraps a
maintained library (scipy, krippendorff, scikit-learn); none knows a capability."""
