#!/usr/bin/env bash
# Install what vcsbench needs, once: Debian packages (as root), a virtualenv from the
# system python3 that sees pysvn and the Subversion bindings, and vcsbench itself.
# Run by `make`; safe to run again (it installs only what is missing).
set -euo pipefail

VENV=${VENV:-.venv}
APT_PACKAGES=(subversion python3-svn python3-subversion python3-venv xfsprogs btrfs-progs)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "vcsbench needs Debian packages that are missing; as root run: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtualenv $VENV from /usr/bin/python3 (with system site-packages for pysvn and svn.*)"
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
echo "installing vcsbench and its test tools into $VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
