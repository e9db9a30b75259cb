"""The reference side of tests/diff/test_diff_port.cpp: trains the examples' MLP
(fc1 Linear(8,16) -> ReLU -> fc2 Linear(16,3), CrossEntropyLoss, SGD) with
PyTorch and saves it with Python smdebug's PyTorch hook, from the weights and
data the C++ test wrote (raw little-endian float32 / int32 files), batch by batch
in the C++ trainer's order.

usage: SMDEBUG_SRC=DIR python3 port_pytorch.py DATA_DIR OUT_DIR STEPS
       SMDEBUG_SRC=DIR python3 port_pytorch.py --check

Prints "SKIPPED: ..." and exits 77 when torch or smdebug cannot be imported;
--check does only that (exit 0 when both can).
"""
import os
import sys

SKIP = 77


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def import_modules():
    """numpy, torch, torch.nn and smdebug.pytorch; a skip when one cannot be imported."""
    try:
        import numpy as np
        import torch
        import torch.nn as nn
    except ImportError as e:
        skip(f"PyTorch is not available to {sys.executable} ({e}; Debian: python3-torch)")
    src = os.environ.get("SMDEBUG_SRC", "")
    tools = os.environ.get("TDBG_SMDEBUG_TOOLS", "")
    sys.path[:0] = [src, os.path.join(tools, "stubs")]
    try:
        import smdebug.pytorch as smd
    except ImportError as e:
        skip(f"Python smdebug cannot be imported from {src} ({e}); it is set up from the shared reference material")
    return np, torch, nn, smd


def main():
    if sys.argv[1:] == ["--check"]:
        import_modules()
        return
    data_dir, out_dir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    np, torch, nn, smd = import_modules()

    def load(name, dtype, shape):
        return torch.from_numpy(np.fromfile(os.path.join(data_dir, name), dtype=dtype).reshape(shape))

    inputs, hidden, classes, batch = 8, 16, 3, 32
    x = load("x.bin", "<f4", (-1, inputs))
    labels = load("labels.bin", "<i4", (-1,)).long()
    learning_rates = np.fromfile(os.path.join(data_dir, "lr.bin"), dtype="<f4")

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(inputs, hidden)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(hidden, classes)

        def forward(self, v):
            return self.fc2(self.act(self.fc1(v)))

    torch.set_num_threads(1)
    model = MLP()
    with torch.no_grad():
        model.fc1.weight.copy_(load("w1.bin", "<f4", (hidden, inputs)))
        model.fc1.bias.copy_(load("b1.bin", "<f4", (hidden,)))
        model.fc2.weight.copy_(load("w2.bin", "<f4", (classes, hidden)))
        model.fc2.bias.copy_(load("b2.bin", "<f4", (classes,)))
    loss_fn = nn.CrossEntropyLoss()
    hook = smd.Hook(
        out_dir=out_dir,
        save_config=smd.SaveConfig(save_interval=1),
        include_collections=["weights", "biases", "gradients", "losses"],
    )
    hook.register_module(model)
    hook.register_loss(loss_fn)
    opt = torch.optim.SGD(model.parameters(), lr=float(learning_rates[0]))
    hook.set_mode(smd.modes.TRAIN)
    points = x.shape[0]
    for step in range(steps):
        rows = [(step * batch + r) % points for r in range(batch)]
        for group in opt.param_groups:
            group["lr"] = float(learning_rates[step])
        opt.zero_grad()
        loss = loss_fn(model(x[rows]), labels[rows])
        loss.backward()
        opt.step()
    hook.close()


if __name__ == "__main__":
    main()
