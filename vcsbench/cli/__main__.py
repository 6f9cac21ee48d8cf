import sys

from vcsbench.cli import main

sys.exit(main())
