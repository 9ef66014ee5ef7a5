"""Prober training (paper §6.1, §6.3, App. D.1, D.6): SFT warm-start data from a teacher
prober's ``evaluate`` run with Category-C questions removed (:mod:`.sft`), GRPO prompts of a
built split (:mod:`.prompts`), and the per-dialogue F1 reward computed by the evaluation
pipeline itself (:mod:`.reward`, with TRL and verl adapters). None of these modules needs
the heavy ML libraries; ``scripts/train_prober.py`` (the ``train`` extra) runs TRL.
"""
