"""``python -m interpreter`` is the ``umpire`` command."""

import sys

from .cli import main

sys.exit(main())
