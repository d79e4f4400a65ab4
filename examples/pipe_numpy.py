#!/usr/bin/env python3
"""A real halfcheck pipe: backend (docs/PROTOCOL.md, version 2) in Python with numpy only.

It reads a KataGo model file (.bin.gz or .txt.gz; the architectures of the shared test nets:
v8 convnets with ordinary and global-pooling blocks, v15-v17 transformers with RoPE, grouped
query attention, SwiGLU FFNs, an RMSNorm or batch-norm trunk tip), computes the net in fp32,
answers every batch with the raw heads, and sends every intermediate tensor halfcheck's
reference taps, under the same names (docs/TAPS.md), so that
    halfcheck taps --net NET --positions POS --nn 9x9 --backend ref32 \
        --backend "pipe:@model=NET python3 examples/pipe_numpy.py"
compares it with ref32 layer by layer. Copy it as a starting point: replace a layer's numpy
arithmetic with a call into your own kernel and halfcheck names the first layer that departs.

Like KataGo's backends (and halfcheck's reference), it first folds batch-norm scales below 1
into the preceding convolutions ("reduce activations"), so its intermediate tensors are the
reference's, not those of the unfolded net.

For halfcheck's own tests it can plant a bug in one block's kernel:
    --bug rope|swiglu|norm-eps|mask-stride --bug-layer N
rope: block N's attention rotates by the opposite angle; swiglu: block N's FFN swaps gate and
up; norm-eps: block N's input norm uses epsilon 0.05; mask-stride: block N reads the board
mask with a row stride one too small (its attention's key mask, or a conv block's input norm).

Without halfcheck on the other end of a pipe, it can also write its taps to files, the way a
tool that cannot speak the protocol would (docs/TAPS.md, "Taps from files"):
    halfcheck taps --net NET --positions POS --nn 9x9 --limit 4 --save golden
    python3 examples/pipe_numpy.py --model NET --inputs golden --dump mine [--layout nhwc] [--dtype f16]
    halfcheck taps --net NET --positions POS --nn 9x9 --limit 4 --backend "tensors:@map=mine/names.yaml mine"
--inputs reads the input rows `taps --save` wrote (golden/npy/input%2Fspatial.npy, ...); --dump
writes one .npy per tap under this script's own names (conv.rconv3__w1a, layers.2.q_proj, np.conv1, ...)
and the input rows it used, and names.yaml, the map from its names to halfcheck's.
"""
import argparse
import gzip
import struct
import sys

import numpy as np

F32 = np.float32
inp, out = sys.stdin.buffer, sys.stdout.buffer


# ---- the model file -------------------------------------------------------------------------

class Reader:
    """Whitespace-separated tokens; weight arrays as text floats or "@BIN@" + raw float32."""

    def __init__(self, data):
        self.d, self.p = data, 0

    def _skip(self):
        d, p = self.d, self.p
        while p < len(d) and d[p] in b" \t\r\n\v\f":
            p += 1
        self.p = p

    def tok(self):
        self._skip()
        s = self.p
        while self.p < len(self.d) and self.d[self.p] not in b" \t\r\n\v\f":
            self.p += 1
        return self.d[s:self.p].decode()

    def int(self):
        return int(self.tok())

    def float(self):
        return F32(float(self.tok()))

    def floats(self, n):
        self._skip()
        if self.d.startswith(b"@BIN@", self.p):
            self.p += 5
            a = np.frombuffer(self.d, dtype="<f4", count=n, offset=self.p).astype(F32)
            self.p += 4 * n
            return a
        return np.array([float(self.tok()) for _ in range(n)], dtype=F32)


class Obj:
    pass


def rd_conv(r):
    c = Obj()
    c.name, ky, kx, ic, oc, _, _ = r.tok(), r.int(), r.int(), r.int(), r.int(), r.int(), r.int()
    c.w = r.floats(ky * kx * ic * oc).reshape(ky, kx, ic, oc)  # file order: y, x, in, out
    return c


def rd_bn(r):
    b = Obj()
    b.name, n, eps, has_scale, has_bias = r.tok(), r.int(), r.float(), r.int(), r.int()
    b.mean, b.var = r.floats(n), r.floats(n)
    b.scale = r.floats(n) if has_scale else np.ones(n, F32)
    b.bias = r.floats(n) if has_bias else np.zeros(n, F32)
    b.eps = eps
    b.ms = (b.scale / np.sqrt(b.var + eps)).astype(F32)
    b.mb = (b.bias - b.ms * b.mean).astype(F32)
    return b


def rd_act(r, version):
    a = Obj()
    a.name = r.tok()
    a.kind = r.tok() if version >= 11 else "ACTIVATION_RELU"
    return a


def rd_matmul(r):
    m = Obj()
    m.name, ic, oc = r.tok(), r.int(), r.int()
    m.w = r.floats(ic * oc).reshape(ic, oc)
    return m


def rd_matbias(r):
    b = Obj()
    b.name, n = r.tok(), r.int()
    b.w = r.floats(n)
    return b


def rd_tf_norm(r):
    n = Obj()
    n.name, c, n.eps = r.tok(), r.int(), r.float()
    n.weight = r.floats(c)
    return n


def rd_block(r, v):
    b = Obj()
    b.kind, b.name = r.tok(), r.tok()
    if b.kind == "ordinary_block":
        b.pre_bn, b.pre_act, b.regular = rd_bn(r), rd_act(r, v), rd_conv(r)
        b.mid_bn, b.mid_act, b.final = rd_bn(r), rd_act(r, v), rd_conv(r)
    elif b.kind == "gpool_block":
        b.pre_bn, b.pre_act, b.regular, b.gconv = rd_bn(r), rd_act(r, v), rd_conv(r), rd_conv(r)
        b.gbn, b.gact, b.gmul = rd_bn(r), rd_act(r, v), rd_matmul(r)
        b.mid_bn, b.mid_act, b.final = rd_bn(r), rd_act(r, v), rd_conv(r)
    elif b.kind == "transformer_attention_block":
        b.nh, b.nkv, b.qd, b.vd, b.rope, b.learnable = [r.int() for _ in range(6)]
        b.norm, b.q, b.k, b.v, b.o = rd_tf_norm(r), rd_matmul(r), rd_matmul(r), rd_matmul(r), rd_matmul(r)
        if b.rope:
            r.tok()  # the rope parameter's name
            if b.learnable:
                nkv, pairs, _ = r.int(), r.int(), r.int()
                b.freqs = r.floats(nkv * pairs * 2).reshape(nkv, pairs, 2)
            else:
                b.theta = r.float()
    elif b.kind == "transformer_ffn_block":
        _, _, b.swiglu = r.int(), r.int(), r.int()
        b.norm, b.l1 = rd_tf_norm(r), rd_matmul(r)
        b.gate = rd_matmul(r) if b.swiglu else None
        b.l2 = rd_matmul(r)
    else:
        raise ValueError("skip: block kind %s is not in this example" % b.kind)
    return b


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    r = Reader(data)
    n = Obj()
    n.name, n.version, n.cin, n.cg = r.tok(), r.int(), r.int(), r.int()
    v = n.version
    n.meta = 0
    if v >= 13:
        [r.tok() for _ in range(7)]  # post-processing multipliers: halfcheck applies them
    if v >= 15:
        n.meta = r.int()
        [r.tok() for _ in range(7)]
    if n.meta:
        raise ValueError("skip: metadata encoders are not in this example")
    t = n.trunk = Obj()
    t.name, nb, t.c, _, _, _, _ = r.tok(), r.int(), r.int(), r.int(), r.int(), r.int(), r.int()
    t.rms = 0
    if v >= 15:
        t.rms = r.int()
        [r.tok() for _ in range(5)]
    t.conv, t.mat = rd_conv(r), rd_matmul(r)
    t.blocks = [rd_block(r, v) for _ in range(nb)]
    if t.rms:
        tip = t.tip = Obj()
        tip.name, c, tip.eps, tip.spatial, _ = r.tok(), r.int(), r.float(), r.int(), r.int()
        tip.gamma, tip.beta = r.floats(c), r.floats(c)
    else:
        t.tip = rd_bn(r)
    t.tip_act = rd_act(r, v)
    p = n.policy = Obj()
    p.name = r.tok()
    if v >= 17:
        p.out_c = r.int()
        [r.tok() for _ in range(3)]
    p.p1, p.g1, p.g1_bn, p.g1_act = rd_conv(r), rd_conv(r), rd_bn(r), rd_act(r, v)
    p.gmul, p.p1_bn, p.p1_act, p.p2 = rd_matmul(r), rd_bn(r), rd_act(r, v), rd_conv(r)
    if v >= 15:
        p.pass1, p.pass_b, p.pass_act, p.pass2 = rd_matmul(r), rd_matbias(r), rd_act(r, v), rd_matmul(r)
    else:
        p.pass1 = rd_matmul(r)
        p.pass2 = None
    h = n.value = Obj()
    h.name = r.tok()
    if v >= 17:
        [r.tok() for _ in range(3)]
    h.v1, h.v1_bn, h.v1_act = rd_conv(r), rd_bn(r), rd_act(r, v)
    h.v2, h.v2_b, h.v2_act = rd_matmul(r), rd_matbias(r), rd_act(r, v)
    h.v3, h.v3_b, h.sv3, h.sv3_b, h.own = rd_matmul(r), rd_matbias(r), rd_matmul(r), rd_matbias(r), rd_conv(r)
    reduce_activations(n)
    return n


# ---- KataGo's activation reduction (folding batch-norm scales into convolutions) -----------

def bn_extract(b):
    small = np.abs(b.ms) < 1
    f = np.where(small, b.ms, F32(1)).astype(F32)
    b.ms = np.where(small, F32(1), b.ms).astype(F32)
    return f


def bn_extract_inv(b):
    s = b.ms
    lo, mid = np.abs(s) < 0.5, (np.abs(s) >= 0.5) & (np.abs(s) < 1)
    f = np.where(lo, F32(0.5), np.where(mid, s, F32(1))).astype(F32)
    with np.errstate(divide="ignore"):
        inv = np.where(lo, F32(2), np.where(mid, F32(1) / s, F32(1))).astype(F32)
    b.ms = np.where(lo, s * F32(2), np.where(mid, F32(1), s)).astype(F32)
    return f, inv


def conv_scale(c, f):
    c.w = (c.w * f[None, None, None, :]).astype(F32)


def mat_scale(m, f):
    m.w = (m.w * f[None, :]).astype(F32)


def reduce_activations(n):
    t = n.trunk
    transformer = any(b.kind.startswith("transformer") for b in t.blocks)
    if not t.rms and not transformer:
        f, inv = bn_extract_inv(t.tip)
        conv_scale(t.conv, f)
        mat_scale(t.mat, f)
        for b in t.blocks:
            b.pre_bn.ms = (b.pre_bn.ms * inv).astype(F32)
            conv_scale(b.final, f)
    for b in t.blocks:
        if b.kind == "ordinary_block":
            conv_scale(b.regular, bn_extract(b.mid_bn))
        elif b.kind == "gpool_block":
            f = bn_extract(b.mid_bn)
            conv_scale(b.regular, f)
            mat_scale(b.gmul, f)
            conv_scale(b.gconv, bn_extract(b.gbn))
    p = n.policy
    f = bn_extract(p.p1_bn)
    conv_scale(p.p1, f)
    mat_scale(p.gmul, f)
    conv_scale(p.g1, bn_extract(p.g1_bn))
    conv_scale(n.value.v1, bn_extract(n.value.v1_bn))


# ---- the forward pass, [B][C][H][W] float32 -----------------------------------------------

def act(kind, x):
    if kind == "ACTIVATION_RELU":
        return np.maximum(x, F32(0))
    if kind == "ACTIVATION_MISH":
        return (x * np.tanh(np.logaddexp(F32(0), x))).astype(F32)
    if kind == "ACTIVATION_SILU":
        return (x / (F32(1) + np.exp(-x))).astype(F32)
    return x


class Net:
    def __init__(self, net, nx, ny, bug, bug_layer):
        self.n, self.nx, self.ny, self.bug, self.bug_layer = net, nx, ny, bug, bug_layer
        self.taps = None  # name -> [B][C][HW] (or [B][C]) while a batch is tapped

    def tap(self, name, x):
        if self.taps is not None:
            self.taps[name] = x.reshape(x.shape[0], x.shape[1], -1) if x.ndim == 4 else x

    def conv(self, c, x):
        ky, kx, _, oc = c.w.shape
        B, _, H, W = x.shape
        py, px = ky // 2, kx // 2
        xp = np.pad(x, ((0, 0), (0, 0), (py, py), (px, px)))
        y = np.zeros((B, H, W, oc), F32)
        for dy in range(ky):
            for dx in range(kx):
                y += np.tensordot(xp[:, :, dy:dy + H, dx:dx + W], c.w[dy, dx], axes=([1], [0]))
        y = np.ascontiguousarray(y.transpose(0, 3, 1, 2))
        self.tap(c.name, y)
        return y

    def bn(self, b, a, x, mask):
        y = act(a.kind, x * b.ms[None, :, None, None] + b.mb[None, :, None, None]) * mask[:, None]
        self.tap(b.name, y)
        return y.astype(F32)

    def gpool(self, x, mask, msum):
        B, C = x.shape[:2]
        s = x.reshape(B, C, -1).sum(axis=2, dtype=F32)
        mean = s / msum[:, None]
        sq = (np.sqrt(msum) - F32(14))[:, None]
        mx = np.maximum((x + (mask[:, None] - F32(1))).reshape(B, C, -1).max(axis=2), F32(-1))
        return np.concatenate([mean, mean * sq * F32(0.1), mx], axis=1).astype(F32)

    def vpool(self, x, msum):
        B, C = x.shape[:2]
        mean = x.reshape(B, C, -1).sum(axis=2, dtype=F32) / msum[:, None]
        sq = (np.sqrt(msum) - F32(14))[:, None]
        return np.concatenate([mean, mean * sq * F32(0.1), mean * (sq * sq * F32(0.01) - F32(0.1))],
                              axis=1).astype(F32)

    def bad_mask(self, mask):
        """The board mask read with a row stride one too small (a planted bug)."""
        B = mask.shape[0]
        flat = mask.reshape(B, -1)
        idx = np.array([y * (self.nx - 1) + x for y in range(self.ny) for x in range(self.nx)])
        return flat[:, idx].reshape(mask.shape)

    def rmsnorm(self, n, x, mask, eps):
        ms = (x * x).sum(axis=1, dtype=F32) / F32(x.shape[1])
        y = x / np.sqrt(ms + eps)[:, None] * n.weight[None, :, None, None] * mask[:, None]
        self.tap(n.name, y)
        return y.astype(F32)

    def linear(self, m, x):
        """x [B][C][H][W] (or [B][C]) times m.w [C][O]."""
        if x.ndim == 2:
            return (x @ m.w).astype(F32)
        y = np.tensordot(x, m.w, axes=([1], [0]))
        return np.ascontiguousarray(y.transpose(0, 3, 1, 2)).astype(F32)

    def rope(self, b, x, heads, sign):
        B, C, H, W = x.shape
        pairs = b.qd // 2
        ys, xs = np.meshgrid(np.arange(H, dtype=F32), np.arange(W, dtype=F32), indexing="ij")
        x = x.reshape(B, heads, pairs, 2, H, W).copy()
        for h in range(heads):
            for p in range(pairs):
                if b.learnable:
                    fx, fy = b.freqs[h * b.nkv // heads, p]
                    ang = xs * fx + ys * fy
                else:
                    per = pairs // 2
                    pe = p if p < per else p - per
                    freq = F32(1) / np.power(b.theta, F32(2 * pe) / F32(pairs))
                    ang = (ys if p < per else xs) * freq
                c, s = np.cos(ang).astype(F32), (np.sin(ang) * sign).astype(F32)
                a0, a1 = x[:, h, p, 0].copy(), x[:, h, p, 1].copy()
                x[:, h, p, 0] = a0 * c - a1 * s
                x[:, h, p, 1] = a0 * s + a1 * c
        return x.reshape(B, C, H, W)

    def block(self, i, b, x, mask, msum):
        bug = self.bug if i == self.bug_layer else None
        if b.kind in ("ordinary_block", "gpool_block"):
            pre_bn = b.pre_bn
            if bug == "norm-eps":
                pre_bn = Obj()
                pre_bn.name = b.pre_bn.name
                pre_bn.ms = (b.pre_bn.ms * np.sqrt(b.pre_bn.var + b.pre_bn.eps) /
                             np.sqrt(b.pre_bn.var + F32(0.05))).astype(F32)
                pre_bn.mb = b.pre_bn.mb
            s = self.bn(pre_bn, b.pre_act, x, self.bad_mask(mask) if bug == "mask-stride" else mask)
            if b.kind == "ordinary_block":
                mid = self.bn(b.mid_bn, b.mid_act, self.conv(b.regular, s), mask)
            else:
                reg = self.conv(b.regular, s)
                g = self.bn(b.gbn, b.gact, self.conv(b.gconv, s), mask)
                bias = self.linear(b.gmul, self.gpool(g, mask, msum))
                self.tap(b.gmul.name, bias)
                mid = self.bn(b.mid_bn, b.mid_act, reg + bias[:, :, None, None], mask)
            x = x + self.conv(b.final, mid)  # the final conv's tap is the trunk after the add
            self.taps is not None and self.tap(b.final.name, x)
        elif b.kind == "transformer_attention_block":
            B, C, H, W = x.shape
            s = self.rmsnorm(b.norm, x, mask, F32(0.05) if bug == "norm-eps" else b.norm.eps)
            q, k, v = self.linear(b.q, s), self.linear(b.k, s), self.linear(b.v, s)
            if b.rope:
                sign = F32(-1) if bug == "rope" else F32(1)
                q, k = self.rope(b, q, b.nh, sign), self.rope(b, k, b.nkv, sign)
            self.tap(b.q.name, q)
            self.tap(b.k.name, k)
            self.tap(b.v.name, v)
            km = (self.bad_mask(mask) if bug == "mask-stride" else mask).reshape(B, 1, 1, H * W)
            qh = q.reshape(B, b.nh, b.qd, H * W)
            kh = np.repeat(k.reshape(B, b.nkv, b.qd, H * W), b.nh // b.nkv, axis=1)
            vh = np.repeat(v.reshape(B, b.nkv, b.vd, H * W), b.nh // b.nkv, axis=1)
            sc = np.matmul(qh.transpose(0, 1, 3, 2), kh) * F32(1 / np.sqrt(F32(b.qd)))  # [B][h][q][k]
            sc = np.where(km > 0, sc, F32(-1e30))
            pr = np.exp(sc - sc.max(axis=3, keepdims=True)) * km
            pr = (pr / pr.sum(axis=3, keepdims=True)).astype(F32)
            att = np.matmul(vh, pr.transpose(0, 1, 3, 2)).reshape(B, b.nh * b.vd, H, W).astype(F32)
            self.tap(b.name + ".attn.out_preproj", att)  # inner tap: before the output projection
            o = self.linear(b.o, att)
            self.tap(b.o.name, o)
            x = x + o * mask[:, None]
        else:
            s = self.rmsnorm(b.norm, x, mask, F32(0.05) if bug == "norm-eps" else b.norm.eps)
            a, g = self.linear(b.l1, s), self.linear(b.gate, s)
            if bug == "swiglu":
                a, g = g, a
            self.tap(b.name + ".ffn.up", a)  # inner taps: linear1 and linear_gate before the SwiGLU
            self.tap(b.name + ".ffn.gate", g)
            h = (act("ACTIVATION_SILU", a) * g).astype(F32)
            self.tap(b.l1.name, h)
            o = self.linear(b.l2, h)
            self.tap(b.l2.name, o)
            x = x + o * mask[:, None]
        self.tap(b.name, x)
        return x.astype(F32)

    def forward(self, spatial, glob):
        n, t = self.n, self.n.trunk
        mask = spatial[:, 0]
        msum = mask.reshape(mask.shape[0], -1).sum(axis=1, dtype=F32)
        x = self.conv(t.conv, spatial)
        gb = self.linear(t.mat, glob)
        self.tap(t.mat.name, gb)
        x = x + gb[:, :, None, None]
        for i, b in enumerate(t.blocks):
            x = self.block(i, b, x, mask, msum)
        if t.rms:
            tip = t.tip
            if tip.spatial:
                ss = (x * x * mask[:, None]).reshape(x.shape[0], -1).sum(axis=1, dtype=F32)
                rms = (F32(1) / np.sqrt(ss / (msum * F32(x.shape[1])) + tip.eps))[:, None, None, None]
            else:
                rms = (F32(1) / np.sqrt((x * x).sum(axis=1, dtype=F32) / F32(x.shape[1]) + tip.eps))[:, None]
            tr = act(t.tip_act.kind, x * rms * tip.gamma[None, :, None, None] + tip.beta[None, :, None, None])
            tr = (tr * mask[:, None]).astype(F32)
            self.tap(tip.name, tr)
        else:
            tr = self.bn(t.tip, t.tip_act, x, mask)
        p = n.policy
        p1 = self.conv(p.p1, tr)
        g1 = self.bn(p.g1_bn, p.g1_act, self.conv(p.g1, tr), mask)
        pooled = self.gpool(g1, mask, msum)
        bias = self.linear(p.gmul, pooled)
        self.tap(p.gmul.name, bias)
        p1 = self.bn(p.p1_bn, p.p1_act, p1 + bias[:, :, None, None], mask)
        pol = self.conv(p.p2, p1)
        if p.pass2 is not None:
            ph = act(p.pass_act.kind, self.linear(p.pass1, pooled) + p.pass_b.w[None])
            self.tap(p.pass1.name, ph)
            ps = self.linear(p.pass2, ph)
            self.tap(p.pass2.name, ps)
        else:
            ps = self.linear(p.pass1, pooled)
            self.tap(p.pass1.name, ps)
        h = n.value
        v1 = self.bn(h.v1_bn, h.v1_act, self.conv(h.v1, tr), mask)
        v2 = act(h.v2_act.kind, self.linear(h.v2, self.vpool(v1, msum)) + h.v2_b.w[None])
        self.tap(h.v2.name, v2)
        val = self.linear(h.v3, v2) + h.v3_b.w[None]
        self.tap(h.v3.name, val)
        sc = self.linear(h.sv3, v2) + h.sv3_b.w[None]
        self.tap(h.sv3.name, sc)
        own = self.conv(h.own, v1)
        B = spatial.shape[0]
        return [pol.reshape(B, -1), ps, val, sc, own.reshape(B, -1)]


# ---- the protocol ---------------------------------------------------------------------------

def read(n):
    data = inp.read(n)
    if len(data) != n:
        sys.exit(0)  # halfcheck closed our input: we are done
    return data


def u32(v):
    return struct.pack("<I", v)


def text(s):
    b = s.encode()
    return u32(len(b)) + b


# ---- taps to files (no pipe) ----------------------------------------------------------------

def own_name(name):
    """This script's own name for one of halfcheck's tap names (what a tool would call it)."""
    if "/" in name:
        return "conv." + name.replace("/", "__")
    if name.startswith("model.blocks."):
        return "layers." + name[len("model.blocks."):]
    return "np." + name


# the map from own names back to halfcheck's: patterns ('*' any run of characters), first match wins
NAMES_YAML = """# examples/pipe_numpy.py --dump: its tensor names -> halfcheck's tap names (docs/TAPS.md)
layout: %s
map:
  in_spatial: {tap: input/spatial, layout: NCHW}
  in_global: input/global
  "conv.*__*__*": "*/*/*"
  "conv.*__*": "*/*"
  "layers.*": "model.blocks.*"
  "np.*": "*"
"""


def dump(args):
    import os
    model = load(args.model)
    if model.meta:
        raise SystemExit("pipe_numpy.py: metadata encoders are not in this example")
    sp = np.load(os.path.join(args.inputs, "npy", "input%2Fspatial.npy")).astype(F32)
    gl = np.load(os.path.join(args.inputs, "npy", "input%2Fglobal.npy")).astype(F32)
    B, C, ny, nx = sp.shape
    net = Net(model, nx, ny, args.bug, args.bug_layer)
    net.taps = {}
    net.forward(sp, gl)
    os.makedirs(args.dump, exist_ok=True)
    dt = "<f2" if args.dtype == "f16" else "<f4"
    np.save(os.path.join(args.dump, "in_spatial.npy"), sp)
    np.save(os.path.join(args.dump, "in_global.npy"), gl)
    for k, a in net.taps.items():
        a = np.asarray(a, dtype=F32)
        if a.ndim == 3:  # [B][C][HW] -> [B][C][H][W]
            a = a.reshape(a.shape[0], a.shape[1], ny, nx)
            if args.layout == "nhwc":
                a = a.transpose(0, 2, 3, 1)
        np.save(os.path.join(args.dump, own_name(k) + ".npy"), np.ascontiguousarray(a.astype(dt)))
    with open(os.path.join(args.dump, "names.yaml"), "w") as f:
        f.write(NAMES_YAML % args.layout.upper())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bug", choices=["rope", "swiglu", "norm-eps", "mask-stride"])
    ap.add_argument("--bug-layer", type=int, default=-1, help="the block (0-based) the bug is in")
    ap.add_argument("--model", help="the model file, when halfcheck sends no path (@model=)")
    ap.add_argument("--inputs", help="with --dump: a directory `halfcheck taps --save` wrote (its input rows)")
    ap.add_argument("--dump", help="write the taps of --inputs' rows to this directory as .npy files, no pipe")
    ap.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw", help="with --dump: spatial taps' layout")
    ap.add_argument("--dtype", choices=["f32", "f16"], default="f32", help="with --dump: the element type written")
    args = ap.parse_args()
    if args.dump:
        if not args.model or not args.inputs:
            ap.error("--dump needs --model and --inputs")
        return dump(args)
    h = struct.unpack("<4s12I", read(52))
    nx, ny, max_batch, C, G, M, PC, SC = h[2:10]
    path = read(h[12]).decode()
    read(struct.unpack("<I", read(4))[0])  # the model's name
    if h[0] != b"HCPQ" or h[1] != 1:
        out.write(b"HCPR" + u32(1) + u32(1) + text("unsupported header version %d" % h[1]))
        out.flush()
        return
    try:
        model = load(args.model or path)
        if model.cin != C or model.cg != G or M:
            raise ValueError("the header does not describe this net")
    except (OSError, ValueError) as e:
        out.write(b"HCPR" + u32(1) + u32(1) + text(str(e)))
        out.flush()
        return
    net = Net(model, nx, ny, args.bug, args.bug_layer)
    # the tap list: what one empty row taps, names and shapes
    net.taps = {}
    sp = np.zeros((1, C, ny, nx), F32)
    sp[:, 0] = 1
    net.forward(sp, np.zeros((1, G), F32))
    names = list(net.taps)
    shapes = {k: net.taps[k].shape[1:] for k in names}
    msg = b"HCPR" + u32(2) + u32(0) + text("pipe_numpy.py") + u32(len(names))
    for k in names:
        c, hw = shapes[k][0], (shapes[k][1] if len(shapes[k]) > 1 else 1)
        msg += text(k) + u32(0) + u32(0) + u32(c) + u32(hw)  # f32, [C][HW]
    out.write(msg)
    out.flush()
    net.taps = None
    area = nx * ny
    while True:
        magic, B = struct.unpack("<4sI", read(8))
        if magic not in (b"HCPB", b"HCPT") or not 1 <= B <= max_batch:
            sys.stderr.write("pipe_numpy.py: bad batch header\n")
            sys.exit(1)
        sp = np.frombuffer(read(4 * B * C * area), dtype="<f4").astype(F32).reshape(B, C, ny, nx)
        gl = np.frombuffer(read(4 * B * G), dtype="<f4").astype(F32).reshape(B, G)
        net.taps = {} if magic == b"HCPT" else None
        heads = net.forward(sp, gl)
        reply = [b"HCPO", u32(0), u32(B)] + [np.ascontiguousarray(a, dtype="<f4").tobytes() for a in heads]
        if net.taps is not None:
            reply += [np.ascontiguousarray(net.taps[k], dtype="<f4").tobytes() for k in names]
        out.write(b"".join(reply))
        out.flush()


if __name__ == "__main__":
    main()
