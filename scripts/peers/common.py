"""What every part of the peers package shares: numpy where it is installed, the
results format and the final statuses."""


try:
    import numpy as np  # every real peer needs it; the harness side does not
except ImportError:
    np = None

FORMAT = "pcbench-peers/1"
FINAL = {"ok", "wrong", "value-only", "not-a-bijection", "skipped-budget", "unsupported", "crashed",
         "timed-out"}
