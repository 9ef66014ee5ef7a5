"""The reward's catalog folder: its command name, its ``train_rewards`` table, and the checks
made when a scorer opens it (another command's folder is refused; a component may not change
once it has successful calls stored there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ioa_synth.evaluate.run import component_of
from ioa_synth.runs.catalog import Catalog
from ioa_synth.runs.folder_kinds import detect_folder
from ioa_synth.runs.manifest import MANIFEST_FILE
from ioa_synth.runs.run_rows import FingerprintMismatch
from ioa_synth.runs.setup_check import SetupCheck

#: ``runs.command`` of a reward catalog.
COMMAND = "train reward"
#: Version of the reward's setup description (its ``fingerprint_version``). 2: each component
#: described on its own (model and request settings with the evaluate templates' sha256),
#: compared one by one against its stored successful calls.
REWARD_SETUP_VERSION = 2
#: The components a reward calls (the prober is the policy being trained).
COMPONENTS = ("simulator", "validity_filter")
REWARDS_TABLE = "train_rewards"
REWARDS_COLUMNS = """
    completion_key VARCHAR, case_id VARCHAR, f1 DOUBLE, precision DOUBLE, recall DOUBLE, k INTEGER,
    a INTEGER, b INTEGER, c INTEGER, categories VARCHAR, mas_hit VARCHAR, error VARCHAR, run_id VARCHAR,
    created_at TIMESTAMP
"""


class RewardSetupError(FingerprintMismatch):
    """The ``out`` folder cannot hold this reward's calls (another command's folder)."""


#: A component may not change once it has successful calls stored in the reward's folder.
CHECK_COMPONENTS = SetupCheck(commands=(COMMAND,), component_of=component_of)


def refuse_results_folder(out: Path) -> None:
    """Refuse a results folder or a session folder (told by its manifest or files; no catalog
    opened): any folder but a reward catalog folder."""
    found = detect_folder(out, open_catalog=False)
    if found is not None and found.kind == "reward":
        return
    if found is not None or (out / MANIFEST_FILE).exists() or (out / "records").is_dir():
        what = found.title if found is not None else "a results folder"
        raise RewardSetupError(f"{out} is {what}; give the reward a catalog folder of its own")


def check_folder(catalog: Catalog, description: dict[str, Any]) -> str:
    """Refuse another command's folder, and a component changed since it stored calls here."""
    others = [c for (c,) in catalog.execute("SELECT DISTINCT command FROM runs WHERE command <> ?", [COMMAND])]
    if others:
        found = detect_folder(catalog.out_dir, catalog=catalog)
        what = f"{found.title} (" if found is not None and found.kind != "reward" else "another command's folder ("
        raise RewardSetupError(f"{catalog.out_dir} is {what}it holds runs of {', '.join(others)}); give the reward "
                               "a catalog folder of its own")
    return CHECK_COMPONENTS(catalog, description)
