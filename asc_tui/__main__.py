"""`python -m asc_tui` = `asc-tui`."""

import sys

from .cli import main

sys.exit(main())
