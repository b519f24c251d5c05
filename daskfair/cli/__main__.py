"""``python -m daskfair.cli``: the same as the ``daskfair`` command."""

import sys

from .main import main

sys.exit(main())
