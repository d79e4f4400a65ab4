#!/usr/bin/env python3
"""A minimal halfcheck pipe: backend (docs/PROTOCOL.md), standard library only.

It answers every batch with zero logits: a uniform policy over the legal moves, even
win/loss/no-result odds, zero scores and ownership. Replace `evaluate` with real arithmetic.
Run it from a suite as   pipe:@model={model} python3 examples/pipe_client.py
"""
import struct
import sys

VERSION = 1
inp, out = sys.stdin.buffer, sys.stdout.buffer


def read(n):
    data = inp.read(n)
    if len(data) != n:
        sys.exit(0)  # halfcheck closed our input: we are done
    return data


def u32s(n):
    return struct.unpack("<%dI" % n, read(4 * n))


def message(text):
    data = text.encode()
    return struct.pack("<I", len(data)) + data


def evaluate(batch, spatial, global_, meta, h):
    """Raw heads for `batch` rows; here all zeros. spatial etc. are flat lists of floats."""
    hw = h["nn_x"] * h["nn_y"]
    pc, sc = h["policy_c"], h["score_c"]
    zeros = lambda n: [0.0] * n
    return (zeros(batch * pc * hw), zeros(batch * pc), zeros(batch * 3), zeros(batch * sc), zeros(batch * hw))


def main():
    magic = read(4)
    if magic != b"HCPQ":
        sys.stderr.write("pipe_client: not a halfcheck header\n")
        return 1
    (version, nn_x, nn_y, max_batch, spatial_c, global_c, meta_c, policy_c, score_c, model_version,
     input_version, path_len) = u32s(12)
    model_path = read(path_len).decode()
    (name_len,) = u32s(1)
    model_name = read(name_len).decode()
    if version != VERSION:
        out.write(b"HCPR" + struct.pack("<II", VERSION, 1) + message("pipe_client speaks version 1"))
        out.flush()
        return 0
    out.write(b"HCPR" + struct.pack("<II", VERSION, 0) + message("pipe_client.py (uniform logits) for " + model_name))
    out.flush()
    h = dict(nn_x=nn_x, nn_y=nn_y, policy_c=policy_c, score_c=score_c)
    hw = nn_x * nn_y
    while True:
        magic = read(4)
        (batch,) = u32s(1)
        if magic != b"HCPB" or not 1 <= batch <= max_batch:
            sys.stderr.write("pipe_client: bad batch header\n")
            return 1
        counts = (batch * spatial_c * hw, batch * global_c, batch * meta_c)
        spatial, global_, meta = (struct.unpack("<%df" % n, read(4 * n)) for n in counts)
        heads = evaluate(batch, spatial, global_, meta, h)
        body = b"".join(struct.pack("<%df" % len(x), *x) for x in heads)
        out.write(b"HCPO" + struct.pack("<II", 0, batch) + body)
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
