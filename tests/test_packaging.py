"""The distributions: both carry the BSD-3-Clause licence with PEP 639 metadata, and the
source distribution carries every file the repository tracks that the test suite or the
documentation reads (so that a test run from an unpacked sdist finds what it needs)."""

import email
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Tracked files that only the repository needs: git's own ignore list.
NOT_IN_SDIST = {".gitignore"}


def tracked_files():
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        return None
    return {line for line in out.stdout.splitlines() if line}


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """Build the sdist and the wheel the way pip does (an isolated build environment)."""
    pytest.importorskip("build", reason="the 'build' package is in the test extra")
    outdir = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(outdir), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (sdist,) = outdir.glob("*.tar.gz")
    (wheel,) = outdir.glob("*.whl")
    return sdist, wheel


@pytest.mark.slow
def test_wheel_carries_licence_and_metadata(dists):
    _, wheel = dists
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(archive.read(metadata_name))
        (licence_name,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        licence = archive.read(licence_name).decode()
    assert metadata["License-Expression"] == "BSD-3-Clause"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Requires-Python"] == ">=3.10"
    assert licence == (ROOT / "LICENSE").read_text()
    assert "BSD 3-Clause License" in licence


@pytest.mark.slow
def test_sdist_carries_everything_tracked(dists):
    sdist, _ = dists
    tracked = tracked_files()
    if tracked is None:
        pytest.skip("not a git checkout: the list of tracked files is unknown")
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if m.isfile()}
    missing = sorted(tracked - NOT_IN_SDIST - members)
    assert missing == [], f"files the sdist leaves out: {missing}"
    assert "LICENSE" in members
