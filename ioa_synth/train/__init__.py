"""Prober training (paper §6.1, §6.3, App. D.1, D.6): SFT warm-start data from a teacher
prober's ``evaluate`` run with Category-C questions removed (:mod:`.sft`), GRPO prompts of a
built split (:mod:`.prompts`), and the per-dialogue F1 reward computed by the evaluation
pipeline itself (:mod:`.reward`, with TRL and verl adapters). None of these modules needs
the heavy ML libraries; ``scripts/train_prober.py`` (the ``train`` extra) runs TRL.
"""

from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind
from ioa_synth.train.run_settings import RewardSettings
from ioa_synth.train.sft_summary import is_sft_folder

#: The reward's catalog folder (``train score --out``, ``RewardScorer(out=...)``).
register_folder_kind("reward", "a reward catalog folder (the --out of 'train score')", commands=("train reward",),
                     settings=RewardSettings, layout=FolderLayout(commands=("train reward",)),
                     hint="read its calls with 'ioa-synth sql'")
#: The warm-start data folder (``train sft --out``): told by its ``sft.jsonl``.
register_folder_kind("sft", "a 'train sft' warm-start folder (sft.jsonl)", layout=FolderLayout(marker=is_sft_folder),
                     manifest=False,
                     hint="read it with 'ioa-synth table ioa-17'; its sft.jsonl is scripts/train_prober.py sft's --data")
