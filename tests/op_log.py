"""Which operators a block of code ran: how the tests tell which kernel a product took."""

from torch.utils._python_dispatch import TorchDispatchMode

ONEDNN_OP = "mkldnn._linear_pointwise.default"  # oneDNN's linear kernel, as the dispatcher names it


class OpLog(TorchDispatchMode):
    """Names of the operators run inside the block, in order."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))
