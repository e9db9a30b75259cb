#!/usr/bin/python3
"""Cross-checks tdbg's event encoder with an independent protobuf decoder.

Runs the C++ writer (tests/format/cross_check_writer.cpp), generates Python
code from tests/python/tdbg_event.proto with protoc, decodes every record with
it, and compares with the writer's expected.json. It also checks the TFRecord
framing with its own CRC-32C, and that protobuf's own serializer gives back
the very bytes tdbg wrote.

Exit status: 0 pass, 1 fail, 77 skipped (protoc, python3-protobuf or numpy missing).
"""

import argparse
import importlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys

SKIP = 77


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(SKIP)


def crc32c(data):
    """Bit-at-a-time CRC-32C (Castagnoli), from the definition."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


SMDEBUG_FOOTER = masked(crc32c(b"0x12345678"))


class Failures:
    def __init__(self):
        self.messages = []

    def check(self, ok, what):
        if not ok:
            self.messages.append(what)


def read_records(path, footer, failures):
    """Yields (offset, payload); checks length CRCs and footers."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        failures.check(length_crc == masked(crc32c(header)), f"{path}@{pos}: length CRC")
        payload = data[pos + 12 : pos + 12 + length]
        (stored_footer,) = struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])
        want = SMDEBUG_FOOTER if footer == "constant" else masked(crc32c(payload))
        failures.check(stored_footer == want, f"{path}@{pos}: footer {stored_footer:#x}, expected {want:#x}")
        yield pos, payload
        pos += 16 + length
    failures.check(pos == len(data), f"{path}: trailing bytes")


def same_float(got, text):
    want = float(text)
    if math.isnan(want):
        return math.isnan(got)
    return got == want


def decode_values(np, tensor):
    """The elements of a TensorProto as a flat list, decoded with numpy."""
    kinds = {1: "<f4", 2: "<f8", 3: "<i4", 4: "<u1", 5: "<i2", 6: "<i1", 8: "<c8", 9: "<i8", 10: "?",
             17: "<u2", 18: "<c16", 19: "<f2", 22: "<u4", 23: "<u8"}
    if tensor.dtype == 0:  # smdebug's strings: DT_INVALID with string_val
        return [bytes(s) for s in tensor.string_val]
    if tensor.dtype == 14:  # bfloat16: the upper half of a float32
        bits = np.frombuffer(tensor.tensor_content, dtype="<u2").astype(np.uint32) << 16
        return [float(x) for x in bits.view("<f4")]
    array = np.frombuffer(tensor.tensor_content, dtype=kinds[tensor.dtype])
    return array.tolist()


def check_tensor_record(np, pb, expected, payload, failures):
    where = f"tensor {expected['tag']}"
    event = pb.Event()
    event.ParseFromString(payload)
    # protobuf's own serializer must reproduce tdbg's bytes exactly (field order, omitted defaults).
    failures.check(event.SerializeToString() == payload, f"{where}: protobuf re-serializes to different bytes")
    failures.check(event.step == expected["step"], f"{where}: step {event.step}")
    failures.check(same_float(event.wall_time, expected["wall_time"]), f"{where}: wall_time {event.wall_time}")
    failures.check(event.WhichOneof("what") == "summary", f"{where}: no summary")
    failures.check(len(event.summary.value) == 1, f"{where}: {len(event.summary.value)} values")
    value = event.summary.value[0]
    failures.check(value.tag == expected["tag"], f"{where}: tag {value.tag!r}")
    failures.check(value.WhichOneof("value") == "tensor", f"{where}: not a tensor")
    plugins = [(p.plugin_name, bytes(p.content)) for p in value.metadata.plugin_data]
    want_plugins = [("mode_step", str(expected["mode_step"]).encode()), ("mode", str(expected["mode"]).encode())]
    failures.check(plugins == want_plugins, f"{where}: plugin data {plugins}")
    tensor = value.tensor
    is_string = expected["dtype"] == 7
    failures.check(tensor.dtype == (0 if is_string else expected["dtype"]), f"{where}: dtype {tensor.dtype}")
    failures.check(tensor.HasField("tensor_shape"), f"{where}: tensor_shape missing")
    dims = [(d.size, d.name) for d in tensor.tensor_shape.dim]
    want_dims = [(s, f"{expected['tag']}_{s}") for s in expected["shape"]]
    failures.check(dims == want_dims, f"{where}: dims {dims}")
    got = decode_values(np, tensor)
    want = expected["values"]
    failures.check(len(got) == len(want), f"{where}: {len(got)} elements, expected {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if is_string:
            ok = g == bytes(w)
        elif isinstance(w, bool):
            ok = g is w or g == w
        elif isinstance(w, int):
            ok = g == w
        elif isinstance(w, list):  # complex
            ok = same_float(g.real, w[0]) and same_float(g.imag, w[1])
        else:
            ok = same_float(float(g), w)
        failures.check(ok, f"{where}: element {i} is {g!r}, expected {w!r}")


def check_tensorboard_record(pb, expected, payload, failures):
    event = pb.Event()
    event.ParseFromString(payload)
    failures.check(event.SerializeToString() == payload, f"{expected['kind']}: re-serializes to different bytes")
    kind = expected["kind"]
    if kind == "file_version":
        failures.check(event.file_version == "brain.Event:2", f"file_version {event.file_version!r}")
        failures.check(event.wall_time == float(expected["wall_time"]), "file_version wall_time")
        return
    failures.check(event.step == expected["step"], f"{kind}: step {event.step}")
    value = event.summary.value[0]
    failures.check(value.tag == expected["tag"], f"{kind}: tag {value.tag!r}")
    if kind == "scalar":
        failures.check(value.WhichOneof("value") == "simple_value", "scalar: no simple_value")
        failures.check(same_float(value.simple_value, expected["value"]), f"scalar: {value.simple_value}")
    else:
        h = value.histo
        got = [h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit), list(h.bucket)]
        want = [expected[k] for k in ("min", "max", "num", "sum", "sum_squares", "bucket_limit", "bucket")]
        failures.check(got == want, f"histogram: {got} != {want}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writer", required=True)
    parser.add_argument("--proto", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()

    protoc = shutil.which("protoc")
    if protoc is None:
        skip("protoc not found (Debian: apt-get install protobuf-compiler)")
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        skip("python3-protobuf not installed")
    try:
        import numpy as np
    except ImportError:
        skip("python3-numpy not installed")

    shutil.rmtree(args.work, ignore_errors=True)
    generated = os.path.join(args.work, "generated")
    data = os.path.join(args.work, "data")
    os.makedirs(generated)
    proto_dir, proto_name = os.path.split(os.path.abspath(args.proto))
    subprocess.run([protoc, f"--proto_path={proto_dir}", f"--python_out={generated}", proto_name], check=True)
    subprocess.run([args.writer, data], check=True)
    sys.path.insert(0, generated)
    pb = importlib.import_module(proto_name[: -len(".proto")] + "_pb2")

    with open(os.path.join(data, "expected.json")) as f:
        expected = json.load(f)
    failures = Failures()

    records = list(read_records(os.path.join(data, "events.tfevents"), "constant", failures))
    failures.check(len(records) == len(expected["events"]), f"{len(records)} tensor records")
    dtypes = set()
    for (offset, payload), want in zip(records, expected["events"]):
        failures.check(offset == want["offset"], f"record offset {offset}, expected {want['offset']}")
        check_tensor_record(np, pb, want, payload, failures)
        dtypes.add(want["dtype"])
    failures.check(len(dtypes) == 16, f"only {len(dtypes)} dtypes covered")

    tb = list(read_records(os.path.join(data, "tensorboard.tfevents"), "crc", failures))
    failures.check(len(tb) == len(expected["tensorboard"]), f"{len(tb)} TensorBoard records")
    for (_, payload), want in zip(tb, expected["tensorboard"]):
        check_tensorboard_record(pb, want, payload, failures)

    if failures.messages:
        for m in failures.messages[:50]:
            print("FAIL:", m)
        print(f"{len(failures.messages)} failures")
        return 1
    print(f"OK: {len(records)} tensor records ({len(dtypes)} dtypes) and {len(tb)} TensorBoard records "
          "decode with protoc-generated code and re-serialize to the same bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
