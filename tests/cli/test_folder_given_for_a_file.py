"""A folder given where a file is wanted (the folder that holds the file: a common slip) is
one line that says so, not "cannot read (Is a directory)"; nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from ioa_helpers import one_line_error

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("argv", [
    ("build", "--seeds", ROOT / "seeds", "--split", "test", "--out", "{out}"),
    ("seeds", "import", ROOT / "seeds", "--out", "{out}"),
    ("estimate", "evaluate", "--data", ROOT / "samples" / "evaluate" / "test", "--out", "{out}", "--prices", ROOT / "seeds"),
    ("belief", "run", "--items", ROOT / "samples" / "belief", "--out", "{out}"),
], ids=["build --seeds", "seeds import", "estimate --prices", "belief run --items"])
def test_a_folder_for_a_file_is_named_as_a_folder(cli, tmp_path, argv):
    out = tmp_path / "o"
    res = cli(*[str(out) if a == "{out}" else a for a in argv])
    assert res.exit_code == 2
    line = one_line_error(res, "is a folder, not a file")
    assert "Is a directory" not in line
    assert not out.exists()
