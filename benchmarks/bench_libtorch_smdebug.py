"""The Python side of bench_libtorch: the same MLP and training loop with Python smdebug 1.0.34's
PyTorch hook (smdebug.pytorch.Hook), measured the same way, printed as one JSON line.

Model: L blocks of Linear(W, W) + ReLU, registered as class "MLP" (parameters MLP_fc0.weight,
...), MSE or cross-entropy loss, SGD, one fixed batch of B random rows on the device. Three
phases, each a hook-on loop against the same loop without a hook, in alternating blocks of
--steps steps (the order flips every pair), each step ended by a device synchronize on cuda,
--warmup steps of each loop first and not counted:

  nothing     a hook that includes no collection, saving every step (nothing is selected)
  reductions  collections weights and gradients, min, max, mean, std, l2 norm, abs_mean, every step
  raw         weights and gradients, raw values, every 10th step

The hook-on loop is a second model with the hook registered (smdebug's hooks cannot be taken
off a module again); each hook-on block ends with smdebug's own end of a step (its writers are
closed, which its next forward_pre_hook would do), so a block pays for what it saved. After each
hook-on block of the raw phase, the bytes one saved step wrote are written again with plain
writes (write, close) into the same directory: the yardstick of the time per saved step.

usage: python3 bench_libtorch_smdebug.py [--device cpu|cuda] [--layers L] [--width W]
       [--batch B] [--loss mse|ce] [--steps N] [--warmup N] [--blocks N] [--threads N]
       [--phases LIST] [--dir DIR]

smdebug is imported from $SMDEBUG_SRC (prepended to sys.path); the directories of
$TDBG_SMDEBUG_FALLBACK (os.pathsep-separated) are appended to sys.path last, for stand-ins of
packages smdebug imports and the machine lacks (pyinstrument, boto3). Prints "SKIPPED: ..." and
exits 77 when torch or smdebug cannot be imported.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

SKIP = 77
SAVE_INTERVAL_RAW = 10


def skip(why):
    print(f"SKIPPED: {why}", flush=True)
    sys.exit(SKIP)


def import_smdebug():
    src = os.environ.get("SMDEBUG_SRC", "")
    if src:
        sys.path.insert(0, src)
    for extra in os.environ.get("TDBG_SMDEBUG_FALLBACK", "").split(os.pathsep):
        if extra:
            sys.path.append(extra)
    os.environ.setdefault("SMDEBUG_LOG_LEVEL", "error")
    try:
        import numpy as np
        import smdebug
        import smdebug.pytorch as smd
        from smdebug.core import writer as smd_writer
    except Exception as e:  # smdebug imports many modules: any failure means it is unusable here
        skip(f"Python smdebug cannot be imported (SMDEBUG_SRC={src or 'unset'}): {e!r}")
    if not hasattr(np.ndarray, "tostring"):
        # smdebug 1.0.34's writer calls ndarray.tostring(), which numpy 2.3 removed: hand it
        # arrays of a subclass that still has it, under its other name, tobytes.
        class _with_tostring(np.ndarray):
            def tostring(self):
                return self.tobytes()

        make_proto = smd_writer.make_tensor_proto

        def make_tensor_proto(nparray_data, tag):
            return make_proto(np.asarray(nparray_data).view(_with_tostring), tag)

        smd_writer.make_tensor_proto = make_tensor_proto
    return smdebug, smd


def parse_arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--loss", choices=["mse", "ce"], default="mse")
    p.add_argument("--steps", type=int, default=10, help="steps per block")
    p.add_argument("--warmup", type=int, default=3, help="steps of each loop before the blocks")
    p.add_argument("--blocks", type=int, default=5, help="blocks of each loop per phase")
    p.add_argument("--threads", type=int, default=0, help="torch's intra-op threads (default: torch's choice)")
    p.add_argument("--phases", default="nothing,reductions,raw", help="some of nothing,reductions,raw")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--dir", default="", help="where the runs go (default: a new temporary directory)")
    args = p.parse_args()
    if min(args.layers, args.width, args.batch, args.steps, args.blocks) < 1 or args.warmup < 0:
        p.error("sizes, --steps and --blocks must be at least 1, --warmup at least 0")
    args.phases = [name for name in args.phases.split(",") if name]
    if not args.phases or any(name not in ("nothing", "reductions", "raw") for name in args.phases):
        p.error("--phases takes nothing, reductions and raw")
    return args


def median(values):
    return statistics.median(values) if values else 0.0


def directory_bytes(root):
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            total += os.path.getsize(os.path.join(folder, name))
    return total


class RunFiles:
    """What the hook wrote since the last look: bytes and saved steps (index files). Event
    files are emptied once counted, so a long run does not fill the disk or the page cache."""

    def __init__(self, run):
        self.run = run
        self.seen_index = set()

    def take(self):
        written, steps = 0, 0
        for folder, _, files in os.walk(os.path.join(self.run, "events")):
            for name in files:
                path = os.path.join(folder, name)
                written += os.path.getsize(path)
                os.truncate(path, 0)
        for folder, _, files in os.walk(os.path.join(self.run, "index")):
            for name in files:
                path = os.path.join(folder, name)
                if path not in self.seen_index:
                    self.seen_index.add(path)
                    written += os.path.getsize(path)
                    steps += 1
        return written, steps


def plain_write(path, buffer):
    """Seconds to write `buffer` into a new file with write() and close(), as the hook writes (no fsync)."""
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    view = memoryview(buffer)
    while view:
        view = view[os.write(fd, view[: 64 << 20]):]
    os.close(fd)
    seconds = time.perf_counter() - start
    os.truncate(path, 0)
    return seconds


def main():
    args = parse_arguments()
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError as e:
        skip(f"PyTorch is not available to {sys.executable} ({e}; Debian: python3-torch)")
    smdebug, smd = import_smdebug()
    if args.device == "cuda" and not torch.cuda.is_available():
        skip("--device cuda, but torch.cuda.is_available() is false")
    device = torch.device(args.device)
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            for i in range(args.layers):
                setattr(self, f"fc{i}", nn.Linear(args.width, args.width))

        def forward(self, x):
            for i in range(args.layers):
                x = F.relu(getattr(self, f"fc{i}")(x))
            return x

    torch.manual_seed(1)
    x = torch.randn(args.batch, args.width, device=device)
    if args.loss == "mse":
        target = torch.randn(args.batch, args.width, device=device)
        loss_fn = F.mse_loss
    else:
        target = torch.randint(0, args.width, (args.batch,), device=device)
        loss_fn = F.cross_entropy

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    def make_model():
        model = MLP().to(device)
        return model, torch.optim.SGD(model.parameters(), lr=args.lr)

    def step(model, optimizer):
        loss = loss_fn(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        synchronize()

    def block(model, optimizer, steps, hook=None):
        """Wall seconds and process CPU seconds (every thread) per step."""
        cpu = time.process_time()
        start = time.perf_counter()
        for _ in range(steps):
            step(model, optimizer)
        if hook is not None:
            hook._close_writers()  # the end of smdebug's step, which the next forward would do
        return (time.perf_counter() - start) / steps, (time.process_time() - cpu) / steps

    reductions = smd.ReductionConfig(reductions=["min", "max", "mean", "std"], norms=["l2"], abs_reductions=["mean"])
    phases = [
        ("nothing", dict(save_config=smd.SaveConfig(save_interval=1), include_collections=[])),
        (
            "reductions",
            dict(
                save_config=smd.SaveConfig(save_interval=1),
                include_collections=["weights", "gradients"],
                reduction_config=reductions,
            ),
        ),
        ("raw", dict(save_config=smd.SaveConfig(save_interval=SAVE_INTERVAL_RAW), include_collections=["weights", "gradients"])),
    ]

    root = args.dir or tempfile.mkdtemp(prefix="bench_libtorch_smdebug_")
    os.makedirs(root, exist_ok=True)
    plain_path = os.path.join(root, "plain_write.bin")
    model_off, optimizer_off = make_model()
    for _ in range(args.warmup):
        step(model_off, optimizer_off)
    results = {}
    try:
        for name, settings in phases:
            if name not in args.phases:
                continue
            print(f"bench_libtorch_smdebug: phase {name} ...", file=sys.stderr, flush=True)
            run = os.path.join(root, name)
            shutil.rmtree(run, ignore_errors=True)
            hook = smd.Hook(out_dir=run, **settings)
            model_on, optimizer_on = make_model()
            hook.register_module(model_on)
            hook.set_mode(smd.modes.TRAIN)
            files = RunFiles(run)
            if args.warmup > 0:
                block(model_on, optimizer_on, args.warmup, hook)
            files.take()  # the warm-up's files are not counted
            off, on, ratios, cpu_ratios, extra_per_saved, plain = [], [], [], [], [], []
            written, saved = 0, 0
            buffer = None
            for b in range(args.blocks):
                if b % 2 == 0:
                    t_off, cpu_off = block(model_off, optimizer_off, args.steps)
                    t_on, cpu_on = block(model_on, optimizer_on, args.steps, hook)
                else:
                    t_on, cpu_on = block(model_on, optimizer_on, args.steps, hook)
                    t_off, cpu_off = block(model_off, optimizer_off, args.steps)
                off.append(t_off)
                on.append(t_on)
                ratios.append(t_on / t_off)
                cpu_ratios.append(cpu_on / cpu_off)
                block_bytes, block_steps = files.take()
                written += block_bytes
                saved += block_steps
                if name == "raw" and block_steps > 0:
                    extra_per_saved.append((t_on - t_off) * args.steps / block_steps)
                    if buffer is None:
                        size = round(block_bytes / block_steps)
                        buffer = (os.urandom(1 << 20) * (size // (1 << 20) + 1))[:size]
                    plain.append(plain_write(plain_path, buffer))
            hook.close()
            del hook, model_on, optimizer_on
            r = {
                "off_ms": median(off) * 1e3,
                "on_ms": median(on) * 1e3,
                "ratio": median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
                "cpu_ratio": median(cpu_ratios),
                "saved_steps": saved,
                "bytes_per_saved_step": written / saved if saved else 0,
            }
            if extra_per_saved:
                r["saved_step_ms"] = median(extra_per_saved) * 1e3
                r["plain_write_ms"] = median(plain) * 1e3
                r["plain_write_bytes"] = len(buffer)
                r["saved_step_x_plain"] = r["saved_step_ms"] / r["plain_write_ms"]
            results[name] = r
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    print(
        json.dumps(
            {
                "smdebug_version": smdebug.__version__,
                "torch_version": torch.__version__,
                "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
                "threads": torch.get_num_threads(),
                "phases": results,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
