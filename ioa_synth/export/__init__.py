"""Publishing a build as a Hugging Face dataset: JSON-lines splits with nested features
(:mod:`.records`), a dataset card with the build's provenance (:mod:`.provenance`,
:mod:`.card`) and Croissant 1.0 metadata (:mod:`.croissant`); :func:`.run.export_build`
writes them. Needs the ``export`` extra (``datasets``, ``mlcroissant``)."""

from pathlib import Path

from ioa_synth.runs.folder_kinds import FolderLayout, register_folder_kind

#: The file list an export writes into its ``--to`` folder (what a later export may replace).
FILE_LIST = ".ioa-export-files.json"


def _is_export(path: Path) -> bool:
    return (path / FILE_LIST).is_file()


#: A dataset folder is published as it is: no manifest, told by its file list.
register_folder_kind("export", "an 'ioa-synth export' dataset folder", layout=FolderLayout(marker=_is_export),
                     manifest=False,
                     hint="export writes it: give the command a folder of its own")
