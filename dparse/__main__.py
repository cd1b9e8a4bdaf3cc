"""``python -m dparse``: the same command line as the ``dparse`` console script."""

from dparse.cli import main

main()
