"""``python -m interpreter`` is the ``umpire`` command."""

import sys

from .cli.main import main

sys.exit(main())
