#!/usr/bin/env bash
# Install what vcsbench needs, once: Debian packages (as root), a virtualenv from the
# system python3 that sees pysvn and the Subversion bindings, and vcsbench itself.
# The Debian packages of the VCS backends come from the backend registry
# (python -m vcsbench.backends --apt-packages), so a new backend brings its own.
# Run by `make`; safe to run again (it installs only what is missing).
set -euo pipefail

VENV=${VENV:-.venv}
# What the sandboxes and the virtualenv need, before any backend is known; valgrind and a
# C compiler count instructions in counted rounds (--counted: callgrind, and the small
# library of vcsbench/measure/counter.c built with valgrind's header).
BASE_PACKAGES=(python3-venv e2fsprogs xfsprogs btrfs-progs util-linux valgrind gcc libc6-dev)
# The servers vcsbench starts on 127.0.0.1 (svnserve and git daemon come with the
# subversion and git packages): Apache httpd with mod_dav_svn, git http-backend as CGI and
# Mercurial's hgweb under mod_wsgi, TLS with a certificate openssl makes for the run, and
# sshd (openssh-server) with the run's own keys.
LOAD_PACKAGES=(apache2 libapache2-mod-svn libapache2-mod-wsgi-py3 openssl openssh-server
  openssh-client mercurial subversion git)
# The distance between clients and servers (--rtt, --bandwidth): toxiproxy, built from its
# Go module with the machine's Go into the virtualenv's bin.
TOXIPROXY_MODULE=github.com/Shopify/toxiproxy/v2/cmd/server
TOXIPROXY_VERSION=v2.12.0
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
# HTML report; a PostgreSQL server the store's tests start clusters of their own with), once.
TEST_PACKAGES=(chromium postgresql)
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

if [ ! -x "$VENV/bin/toxiproxy-server" ]; then
  if ! command -v go >/dev/null; then
    echo "vcsbench: go is not installed: --rtt and --bandwidth need toxiproxy, built with go (apt-get install -y golang-go)" >&2
  else
    echo "building toxiproxy $TOXIPROXY_VERSION into $VENV/bin/toxiproxy-server (go install)"
    GOBIN_DIR=$(mktemp -d)
    GOBIN="$GOBIN_DIR" go install "$TOXIPROXY_MODULE@$TOXIPROXY_VERSION"
    mv "$GOBIN_DIR/server" "$VENV/bin/toxiproxy-server"
    rmdir "$GOBIN_DIR"
  fi
fi
