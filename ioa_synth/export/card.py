"""The dataset card (``README.md``): a YAML header that ``datasets`` and the Hugging Face
Hub read (configs and data files, features, licence, task categories, size category,
tags), rendered with ``huggingface_hub``, and a body stating the build's provenance
(:mod:`.provenance`), rendered from ``templates/card.md.jinja2``."""

from __future__ import annotations

from typing import Any

import jinja2

from ioa_synth.reports.output import fmt

TASK_CATEGORIES = ["text-generation", "question-answering"]
TAGS = ["dialogue", "synthetic", "hidden-disagreement", "illusion-of-alignment", "common-ground", "benchmark"]

#: The Hub's size categories: (upper bound, label).
_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` label of ``n`` records."""
    return next((label for bound, label in _SIZES if n < bound), "n>1M")


def card_header(split_files: dict[str, str], sizes: dict[str, int], license: str, pretty_name: str,
                num_bytes: dict[str, int] | None = None):
    """The card's metadata (``huggingface_hub.DatasetCardData``) with the ``default``
    config's data files, split sizes (``num_bytes``: bytes per split file) and the features
    of :func:`ioa_synth.export.records.features`."""
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    from ioa_synth.export.records import features

    data = DatasetCardData(
        license=license, language=["en"], pretty_name=pretty_name, task_categories=TASK_CATEGORIES,
        size_categories=[size_category(sum(sizes.values()))], tags=TAGS,
        configs=[{"config_name": "default",
                  "data_files": [{"split": name, "path": path} for name, path in split_files.items()]}])
    splits = SplitDict()
    for name, n in sizes.items():
        splits.add(SplitInfo(name=name, num_examples=n, num_bytes=(num_bytes or {}).get(name, 0)))
    DatasetInfosDict({"default": DatasetInfo(features=features(), splits=splits)}).to_dataset_card_data(data)
    return data


def _pct(v: float | None) -> str:
    return fmt(v, percent=True)


def _num(v: float | None) -> str:
    return fmt(v)


def card_body(provenance: dict[str, Any], split_sizes: dict[str, int], license: str, pretty_name: str) -> str:
    """The card's Markdown body."""
    from ioa_synth import __version__

    env = jinja2.Environment(loader=jinja2.PackageLoader("ioa_synth.export", "templates"),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    return env.get_template("card.md.jinja2").render(
        p=provenance, split_sizes=split_sizes, license=license, pretty_name=pretty_name,
        toolkit_version=__version__, pct=_pct, num=_num)


def dataset_card(provenance: dict[str, Any], split_files: dict[str, str], sizes: dict[str, int], license: str,
                 pretty_name: str, num_bytes: dict[str, int] | None = None) -> str:
    """The whole ``README.md``: YAML header between ``---`` lines, then the body."""
    header = card_header(split_files, sizes, license, pretty_name, num_bytes)
    return f"---\n{header.to_yaml()}\n---\n\n{card_body(provenance, sizes, license, pretty_name)}"
