"""`python -m memstrata ...` runs the CLI, the same as the `memstrata` command."""

import sys

from memstrata.cli.main import main

sys.exit(main())
