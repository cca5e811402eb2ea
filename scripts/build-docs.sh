#!/usr/bin/env bash
# Builds the documentation (docs/, navigation in mkdocs.yml) into a browsable site in
# build/site with MkDocs, from Debian's mkdocs package (installed with apt-get when
# missing, as root or with sudo). Open build/site/index.html; `cmake --install` copies the
# site to share/doc/optistep/html when it has been built. The pages stay plain Markdown;
# their links are checked by ctest docs_links (tests/docs/check_links.py).
# Usage: scripts/build-docs.sh [mkdocs build options, e.g. --strict]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! /usr/bin/python3 -c "import mkdocs" 2>/dev/null; then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "build-docs: installing mkdocs" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends mkdocs >/dev/null
fi
cd "$root"
# Debian's mkdocs runs under Debian's Python, whatever python3 is first on PATH.
/usr/bin/python3 -m mkdocs build --clean --config-file mkdocs.yml --site-dir "$root/build/site" "$@"
echo "build-docs: $root/build/site/index.html"
