#!/usr/bin/env bash
# Install what vcsbench needs, once: Debian packages (as root), a virtualenv from the
# system python3 that sees pysvn and the Subversion bindings, and vcsbench itself.
# The Debian packages of the VCS backends come from the backend registry
# (python -m vcsbench.backends --apt-packages), so a new backend brings its own.
# Run by `make`; safe to run again (it installs only what is missing).
set -euo pipefail

VENV=${VENV:-.venv}
# What the sandboxes and the virtualenv need, before any backend is known.
BASE_PACKAGES=(python3-venv e2fsprogs xfsprogs btrfs-progs util-linux)
# The servers `vcsbench load` starts on 127.0.0.1 (svnserve and git daemon come with the
# subversion and git packages): Apache httpd with mod_dav_svn, and git http-backend as CGI.
LOAD_PACKAGES=(apache2 libapache2-mod-svn subversion git)
APT_UPDATED=

ensure_apt() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "vcsbench needs Debian packages that are missing; as root run: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "installing Debian packages: ${missing[*]}"
  if [ -z "$APT_UPDATED" ]; then
    apt-get update -qq
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# `bootstrap.sh test-tools`: what the tests need beyond vcsbench (a real browser for the
# HTML report), once.
TEST_PACKAGES=(chromium)
if [ "${1:-}" = "test-tools" ]; then
  ensure_apt "${TEST_PACKAGES[@]}"
  exit 0
fi

ensure_apt "${BASE_PACKAGES[@]}" "${LOAD_PACKAGES[@]}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtualenv $VENV from /usr/bin/python3 (with system site-packages for pysvn and svn.*)"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
echo "installing vcsbench and its test tools into $VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
read -r -a BACKEND_PACKAGES <<< "$("$VENV/bin/python" -m vcsbench.backends --apt-packages)"
ensure_apt "${BACKEND_PACKAGES[@]}"
