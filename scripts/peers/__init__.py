"""peers - time and judge the libraries people use instead, on the harness's inputs.

    python3 -m peers [--suite S] [--problem P[,P]] [--filter TEXT] [--peer NAME[,NAME]]
             [--peer MODULE:FUNCTION --problem P]
             [--results DIR] [--pcbench PATH] [--reps R] [--budget S] [--force] [--list]

`pcbench bench --write-inputs` writes the clouds of each configuration of the suite
(same generators, same seeds as the harness). Each available peer is timed on them
the way the harness times: inputs prepared first (kd-trees built, tensors on the
GPU), one warm-up, then the median of R repetitions of the whole batch (GPU peers
timed with CUDA events). Every answer is written to a file and judged by `pcbench
check`: a peer that answers wrong is stored as "wrong", never as a timing.
Results: RESULTS/<machine>/<suite>/peers-<configuration>.json, one file per
configuration, written as soon as it is done; a later run skips peers already
stored (--force re-runs them). A peer that is not installed is stored as
"unavailable" with the reason. `make peers-deps` installs the CPU peers.
`--peer MODULE:FUNCTION --problem P` times and judges a callable of yours
(UserPeer says its signature for each problem).

The package: inputs.py (the clouds and configurations), adapters/ (the peers by
family: cpu, gpu, built from source, the user's own), runner.py (timing, judging,
a process a peer), store.py (the results files).
"""
from .adapters import PEERS, Peer, UserPeer
from .common import FINAL, FORMAT, np
from .inputs import read_configs, read_ply
from .runner import main, on_every_core, optimum, why_wrong

__all__ = ["FINAL", "FORMAT", "PEERS", "Peer", "UserPeer", "main", "np", "on_every_core",
           "optimum", "read_configs", "read_ply", "why_wrong"]
