"""What a peer is: one library's call on one problem, prepared, run and answered."""
import sys


class Peer:
    """One library's way of solving one problem. prepare() turns the clouds of a
    batch into per-cloud states outside the timing (like the harness's prepare);
    solve(state) answers one cloud."""
    name = problem = module = what = ""
    dist = None  # the distribution's name where it differs from the module's
    device = "cpu"
    threads = "1"
    exact = True
    value_only = False  # answers a value and no assignment (approximations)
    own_start = False   # FPS: judged from its own first sample
    batched = False     # prepare makes one state of the whole batch; solve answers every cloud
    ragged = False      # takes a ragged batch whole (its lengths or batch pointers), each
                        # cloud's answer its own; else a ragged batch is one call a cloud
    bijection = True    # EMD: promises a bijection (else one that is not is timed and marked)
    max_gap = None      # EMD: the bound it promises on its gap to the optimum (None: exact,
                        # or only reported where exact is False)
    takes_gap = False   # EMD: asks for the configuration's own gap (loss mode, max_gap > 0)

    def available(self):
        """None when it can run here, else the reason."""
        try:
            __import__(self.module)
        except Exception as e:  # ImportError, or a broken install
            return "%s not importable: %s" % (self.module, str(e).splitlines()[0][:120])
        return None

    def unsupported(self, cfg):
        """None when it answers this configuration, else the reason (three_nn: k = 3 only)."""
        return None

    def promised_gap(self, cfg):
        """EMD: the gap it is held to on this configuration (see max_gap)."""
        return (cfg.get("max_gap") or self.max_gap) if self.takes_gap else self.max_gap

    def version(self):
        """The installed distribution's version (not every module has __version__)."""
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version(self.dist or self.module)
        except PackageNotFoundError:
            return getattr(sys.modules.get(self.module), "__version__", "?")

    def prepare(self, clouds, cfg):
        return clouds

    def sync(self):
        pass
