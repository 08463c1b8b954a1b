"""The review page of the shared retail flow, written and photographed by headless Chromium.

    .venv/bin/python benchmarks/review_page.py [--out .stretto/review]

Writes `review.html` (`stretto review`'s page for `tests/fixtures/flows/tau2-retail.flow.json`)
and `review.png`, a screenshot Debian's `chromium` takes of it from disk (no server): the artifact
issue 27 asks to keep. Fails loudly when Chromium is missing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / ".stretto" / "review")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("review_page: headless Chromium is not installed (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    from stretto_core.flow.ir import load_flow
    from stretto_core.flow.page import render_review
    from stretto_core.private import write_private_text

    page = write_private_text(args.out / "review.html",
                              render_review(load_flow(ROOT / "tests/fixtures/flows/tau2-retail.flow.json"),
                                            title="stretto review: tau2 retail"))
    shot = args.out / "review.png"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1200,2400",
                        page.resolve().as_uri()], check=True, capture_output=True, timeout=120)
    print(f"wrote {page} and {shot} ({shot.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
