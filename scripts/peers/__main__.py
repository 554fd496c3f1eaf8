"""python3 -m peers: what make peers runs (scripts/ on PYTHONPATH)."""
import sys

from .runner import main

sys.exit(main())
