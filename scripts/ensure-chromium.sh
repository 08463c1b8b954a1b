#!/usr/bin/env bash
# Make sure a headless Chromium is on PATH for the review page's browser test
# (tests/test_review_page.py): Debian's `chromium`, installed quietly with apt-get when absent.
# Never fails: with no apt-get, or an install that does not work, it says so in one line and the
# browser test reports itself skipped (pytest runs with -rs, so the skip's reason is printed).
set -uo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  echo "chromium: $(command -v chromium || command -v chromium-browser)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: not installed and no apt-get here; the review page's browser test will be skipped"
  exit 0
fi
if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) \
    >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1; then
  echo "chromium: installed $(command -v chromium)"
else
  echo "chromium: apt-get could not install it; the review page's browser test will be skipped"
fi
exit 0
