"""``python -m vcsbench.backends --apt-packages``: what the bootstrap installs, from REGISTRY."""

from __future__ import annotations

import sys

from vcsbench.backends import apt_packages, markdown_table


def main(argv: list[str]) -> int:
    if argv == ["--apt-packages"]:
        print(" ".join(apt_packages()))
        return 0
    if argv == ["--markdown"]:
        print(markdown_table())
        return 0
    print("usage: python -m vcsbench.backends --apt-packages | --markdown", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
