"""Where the seed sources live and how politely to call them, read from the environment.

=====================  =============================================  ==========================
variable               meaning                                        default
=====================  =============================================  ==========================
``ARXIV_API_URL``      arXiv query endpoint                           ``https://export.arxiv.org/api/query``
``NCBI_EUTILS_URL``    E-utilities base (``<base>/esearch.fcgi``)     ``https://eutils.ncbi.nlm.nih.gov/entrez/eutils``
``OPENALEX_API_URL``   OpenAlex REST base (``<base>/works``)          ``https://api.openalex.org``
``NCBI_EMAIL``         sent with every E-utilities request            unset (warned)
``NCBI_API_KEY``       raises the NCBI limit from 3 to 10 requests/s  unset
``OPENALEX_EMAIL``     sent as ``From`` (polite pool)                 unset
``OPENALEX_API_KEY``   sent as ``Authorization: Bearer``              unset
``IOA_SYNTH_DELAY_SCALE``  multiplies every wait (tests: ``0``)       ``1``
=====================  =============================================  ==========================
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping
from urllib.parse import urlsplit

from ioa_synth.seeds.pace import Backoff, Pacer, delay_scale

ARXIV_DEFAULT = "https://export.arxiv.org/api/query"
EUTILS_DEFAULT = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
OPENALEX_DEFAULT = "https://api.openalex.org"


def _arxiv_endpoint(url: str) -> str:
    """A bare host (``http://127.0.0.1:8000``) gets arXiv's path ``/api/query``."""
    url = url.rstrip("/")
    return url if urlsplit(url).path not in ("", "/") else url + "/api/query"


@dataclass
class Settings:
    """Endpoints, credentials and the pacing knobs for one fetch run (see module docstring)."""

    arxiv_url: str = ARXIV_DEFAULT
    eutils_url: str = EUTILS_DEFAULT
    openalex_url: str = OPENALEX_DEFAULT
    ncbi_email: str | None = None
    ncbi_api_key: str | None = None
    openalex_email: str | None = None
    openalex_api_key: str | None = None
    scale: float = 1.0
    arxiv_page_size: int = 200  # results per arXiv request (API maximum 2,000)
    arxiv_max_per_query: int = 30_000  # arXiv API: slice larger result sets by submittedDate
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> "Settings":
        """Read the variables above from ``env`` (default ``os.environ``).

        Raises ``ValueError`` for an invalid ``IOA_SYNTH_DELAY_SCALE``.
        """
        env = os.environ if env is None else env
        get = lambda k: (env.get(k) or "").strip() or None  # noqa: E731
        values = dict(
            arxiv_url=_arxiv_endpoint(get("ARXIV_API_URL") or ARXIV_DEFAULT),
            eutils_url=(get("NCBI_EUTILS_URL") or EUTILS_DEFAULT).rstrip("/"),
            openalex_url=(get("OPENALEX_API_URL") or OPENALEX_DEFAULT).rstrip("/"),
            ncbi_email=get("NCBI_EMAIL"),
            ncbi_api_key=get("NCBI_API_KEY"),
            openalex_email=get("OPENALEX_EMAIL"),
            openalex_api_key=get("OPENALEX_API_KEY"),
            scale=delay_scale() if env is os.environ else float(env.get("IOA_SYNTH_DELAY_SCALE") or 1),
        )
        values.update(overrides)
        return cls(**values)

    def pacer(self, interval: float) -> Pacer:
        """A :class:`Pacer` with this run's scale and sleep function."""
        return Pacer(interval, scale=self.scale, sleep=self.sleep, clock=self.clock)

    def backoff(self, base: float = 2.0, **kwargs) -> Backoff:
        """A :class:`Backoff` with this run's scale and sleep function."""
        return Backoff(base=base, scale=self.scale, sleep=self.sleep, **kwargs)
