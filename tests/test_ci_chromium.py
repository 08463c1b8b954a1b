"""CI installs Debian's chromium for the review page's browser test (`scripts/ensure-chromium.sh`),
quietly, and never fails CI over it: without apt-get, or when apt-get fails, it says the browser
test will be skipped, and pytest prints that skip's reason (`-rs`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "ensure-chromium.sh"


def run_with(tmp_path: Path, apt_get: str | None) -> subprocess.CompletedProcess[str]:
    """The script on a PATH holding only a stand-in apt-get (or none)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if apt_get is not None:
        fake = bin_dir / "apt-get"
        fake.write_text("#!/bin/sh\n" + apt_get)
        fake.chmod(0o755)
    return subprocess.run(["/bin/bash", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                          env={"PATH": str(bin_dir)})


def test_without_apt_get_it_says_the_browser_test_will_skip_and_succeeds(tmp_path: Path) -> None:
    done = run_with(tmp_path, None)
    assert done.returncode == 0 and "no apt-get" in done.stdout and "skipped" in done.stdout


def test_a_failing_apt_get_does_not_fail_ci(tmp_path: Path) -> None:
    done = run_with(tmp_path, "exit 100\n")
    assert done.returncode == 0 and "could not install" in done.stdout and "skipped" in done.stdout


def test_apt_get_installs_chromium_when_it_is_missing(tmp_path: Path) -> None:
    log = tmp_path / "apt.log"
    # The stand-in records its arguments and, on `install`, puts a `chromium` on PATH.
    done = run_with(tmp_path, f'echo "$@" >> {log}\n'
                              f'case "$*" in *install*chromium*) printf "#!/bin/sh\\n" > {tmp_path}/bin/chromium; '
                              f'/bin/chmod +x {tmp_path}/bin/chromium;; esac\n')
    assert done.returncode == 0 and f"installed {tmp_path}/bin/chromium" in done.stdout
    calls = log.read_text().splitlines()
    assert calls[0].startswith("update") and "install" in calls[1] and "chromium" in calls[1]


def test_ci_runs_it_before_the_tests_and_pytest_prints_skip_reasons() -> None:
    lines = [line.split("#")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert lines.index("bash scripts/ensure-chromium.sh") < lines.index("bash scripts/test.sh")
    addopts = re.search(r'^addopts = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert addopts is not None and "-rs" in addopts.group(1).split()
