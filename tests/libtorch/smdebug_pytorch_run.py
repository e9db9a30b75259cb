"""The reference side of tests/libtorch/test_libtorch_smdebug.cpp: trains a small network
(Net: fc1 Linear(4,6) -> act ReLU -> fc2 Linear(6,3), CrossEntropyLoss, SGD 0.1) on the CPU
with PyTorch and saves it with Python smdebug's PyTorch hook (register_module, register_loss).
Six TRAIN steps, then two EVAL steps without gradients, every step saved.

The parameters and the data come from closed formulas the C++ test evaluates the same way
(doubles from sin, rounded to float32), so that nothing is shared through files. Keep the
formulas, the collections and the sequence of calls in step with the C++ side.

usage: SMDEBUG_SRC=DIR TDBG_SMDEBUG_TOOLS=DIR python3 smdebug_pytorch_run.py OUT_DIR

Prints "SKIPPED: ..." and exits 77 when torch or smdebug cannot be imported.
"""
import math
import os
import sys

SKIP = 77

INPUTS, HIDDEN, CLASSES, BATCH = 4, 6, 3, 8
TRAIN_STEPS, EVAL_STEPS = 6, 2
LEARNING_RATE = 0.1

# The reduction lists of the collections (smdebug's spellings); the C++ side uses the same.
EVERY_REDUCTION = "min,max,mean,std,variance,sum,prod"
EVERY_NORM = "l1,l2"
INTEGER_REDUCTIONS = "min,max,sum,prod"  # what torch computes for an integer tensor


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def parameter_value(which, i, j, cols):
    """Element (i, j) of a parameter: weights start at 1, biases at 101 (fc1) and 201 (fc2)."""
    return 0.1 * math.sin(which + i * cols + j)


def data_value(step, b, i):
    return math.sin(0.7 * (step * BATCH + b) + 0.3 * i + 0.1)


def label_value(step, b):
    return (5 * b + step) % CLASSES


def main():
    out_dir = sys.argv[1]
    try:
        import torch
        import torch.nn as nn
    except ImportError as e:
        skip(f"PyTorch is not available to {sys.executable} ({e}; Debian: python3-torch)")
    src = os.environ.get("SMDEBUG_SRC", "")
    tools = os.environ.get("TDBG_SMDEBUG_TOOLS", "")
    sys.path[:0] = [src, os.path.join(tools, "stubs")]
    os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
    try:
        import smdebug.pytorch as smd
        from smdebug import ReductionConfig
    except Exception as e:  # ImportError, or a protobuf module smdebug's setup did not compile
        skip(f"Python smdebug cannot be imported from {src} ({e}); it is set up from the shared reference material")

    def matrix(which, rows, cols):
        values = [[parameter_value(which, i, j, cols) for j in range(cols)] for i in range(rows)]
        return torch.tensor(values, dtype=torch.float32)

    def vector(which, size):
        return torch.tensor([parameter_value(which, 0, j, size) for j in range(size)], dtype=torch.float32)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(INPUTS, HIDDEN)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(HIDDEN, CLASSES)

        def forward(self, v):
            return self.fc2(self.act(self.fc1(v)))

    torch.set_num_threads(1)
    net = Net()
    with torch.no_grad():
        net.fc1.weight.copy_(matrix(1, HIDDEN, INPUTS))
        net.fc1.bias.copy_(vector(101, HIDDEN))
        net.fc2.weight.copy_(matrix(2, CLASSES, HIDDEN))
        net.fc2.bias.copy_(vector(201, CLASSES))
    criterion = nn.CrossEntropyLoss()

    hook = smd.Hook(
        out_dir=out_dir,
        save_config=smd.SaveConfig(save_interval=1),
        include_collections=["weights", "biases", "gradients", "losses", "relu_activations", "labels"],
    )
    every = dict(reductions=EVERY_REDUCTION.split(","), norms=EVERY_NORM.split(","),
                 abs_reductions=EVERY_REDUCTION.split(","), abs_norms=EVERY_NORM.split(","))
    hook.get_collection("weights").reduction_config = ReductionConfig(save_raw_tensor=True, **every)
    hook.get_collection("gradients").reduction_config = ReductionConfig(**every)
    hook.get_collection("biases").reduction_config = ReductionConfig(
        save_raw_tensor=True, reductions=["std", "variance", "mean"], abs_norms=["l2"])
    relu = hook.get_collection("relu_activations")
    relu.include("^act_output_")
    relu.reduction_config = ReductionConfig(reductions=["mean", "max", "std"], abs_norms=["l1"])
    labels = hook.get_collection("labels")
    labels.include("^labels_output_")
    labels.reduction_config = ReductionConfig(
        save_raw_tensor=True, reductions=INTEGER_REDUCTIONS.split(","), abs_reductions=INTEGER_REDUCTIONS.split(","))
    hook.register_module(net)
    hook.register_loss(criterion)
    optimizer = torch.optim.SGD(net.parameters(), lr=LEARNING_RATE)

    def batch(step):
        x = torch.tensor([[data_value(step, b, i) for i in range(INPUTS)] for b in range(BATCH)], dtype=torch.float32)
        y = torch.tensor([label_value(step, b) for b in range(BATCH)], dtype=torch.int64)
        return x, y

    def forward(step):
        x, y = batch(step)
        loss = criterion(net(x), y)
        # An int32 tensor: its stored reductions keep torch's integer dtypes.
        hook.record_tensor_value("labels", (y + 1).to(torch.int32))
        return loss

    hook.set_mode(smd.modes.TRAIN)
    for step in range(TRAIN_STEPS):
        optimizer.zero_grad()
        loss = forward(step)
        loss.backward()
        optimizer.step()
    hook.set_mode(smd.modes.EVAL)
    with torch.no_grad():
        for step in range(EVAL_STEPS):
            forward(TRAIN_STEPS + step)
    hook.close()


if __name__ == "__main__":
    main()
