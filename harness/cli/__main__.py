"""`python -m harness.cli ARGS`: the same as `hlm ARGS`."""

import sys

from harness.cli import main

sys.exit(main())
