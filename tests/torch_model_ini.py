#!/usr/bin/env python3
"""tests/torch_model_ini.py: the [model] section of an emu INI file read again, apart from
emu's reader, into the same network in PyTorch (float64), for tests/test_torch_model_ini.c.

usage: torch_model_ini.py DIR NAME:C:H:W:T:V:K:B ...
  C H W: the images' shape (T > 0: T tokens < V instead), K classes, B samples;
  DIR/NAME.ini the INI file, DIR/NAME.bin emu's parameters and gradients (float32, emu's
  count each), the inputs (float32 images or int32 tokens) and the labels (int32).
prints per model "NAME params P loss L worst W at TENSOR": PyTorch's parameter count,
its mean cross-entropy loss with emu's parameters, and the largest |emu - torch| of a
gradient over its tensor's largest |torch| (the model's largest where the tensor's is 0
in exact arithmetic).

Tensors stay (B, C, H, W) as emu's nodes are (C, H, W): flatten gives (B, N, 1, 1), a
linear layer reads flat input (H = W = 1), batch norm on such input is BatchNorm1d's."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def read_model(path):
    """The [model] lines in order: (name, [op, args...], [inputs])."""
    lines, sect = [], None
    for raw in open(path):
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        if s[0] == "[":
            sect = s[1:s.index("]")].strip()
            continue
        for c in (" #", " ;", "\t#", "\t;"):
            if c in s:
                s = s[:s.index(c)]
        if sect == "model":
            name, _, text = s.partition("=")
            words = text.split()
            ins = words[words.index("from") + 1:] if "from" in words else None
            words = words[:words.index("from")] if "from" in words else words
            lines.append((name.strip(), words, ins))
    return lines


class Described(nn.Module):
    def __init__(s, lines, C, H, W, T, V, K):
        super().__init__()
        s.lines, s.layers, s.fn = lines, nn.ModuleDict(), {}
        shape = {"input": (C, H, W)}
        prev = "input"
        for name, words, ins in lines:
            op, args = words[0], [w for w in words[1:] if "=" not in w]
            opt = dict(w.split("=") for w in words[1:] if "=" in w)
            ins = ins or [prev]
            c, h, w = shape.get(ins[0], (0, 0, 0))
            if op == "conv":
                out, k = int(args[0]), int(args[1])
                st, pad = int(opt.get("stride", 1)), int(opt.get("pad", 0))
                s.layers[name] = nn.Conv2d(c, out, k, st, pad, bias=opt.get("bias") != "false")
                shape[name] = (out, (h + 2 * pad - k) // st + 1, (w + 2 * pad - k) // st + 1)
            elif op == "batchnorm":
                s.layers[name] = nn.BatchNorm2d(c)
                shape[name] = (c, h, w)
            elif op in ("maxpool", "avgpool"):
                k = int(args[0])
                st = int(opt.get("stride", k))
                s.layers[name] = (nn.MaxPool2d if op == "maxpool" else nn.AvgPool2d)(k, st)
                shape[name] = (c, (h - k) // st + 1, (w - k) // st + 1)
            elif op == "linear":
                assert h == 1 and w == 1, name + ": linear on unflattened input"
                out = K if args[0] == "classes" else int(args[0])
                s.layers[name] = nn.Linear(c, out)
                shape[name] = (out, 1, 1)
            elif op == "embedding":
                s.layers[name] = nn.Embedding(V, int(args[0]))
                shape[name] = (T, int(args[0]), 1)
            elif op == "lstm":
                s.layers[name] = nn.LSTM(h, int(args[0]), batch_first=True)
                shape[name] = (int(args[0]), 1, 1)
            elif op in ("relu", "add"):
                shape[name] = (c, h, w)
            elif op == "gap":
                shape[name] = (c, 1, 1)
            elif op == "flatten":
                shape[name] = (c * h * w, 1, 1)
            else:
                raise ValueError(name + ": unknown op " + op)
            s.fn[name] = (op, ins)
            prev = name

    def forward(s, x):
        out, B = {"input": x}, x.shape[0]
        for name, _, _ in s.lines:
            op, ins = s.fn[name]
            a = out[ins[0]]
            if op == "relu":
                y = F.relu(a)
            elif op == "add":
                y = a + out[ins[1]]
            elif op == "gap":
                y = F.adaptive_avg_pool2d(a, 1)
            elif op == "flatten":
                y = a.reshape(B, -1, 1, 1)
            elif op == "linear":
                y = s.layers[name](a.reshape(B, -1)).reshape(B, -1, 1, 1)
            elif op == "embedding":
                y = s.layers[name](x)
            elif op == "lstm":
                _, (h, _) = s.layers[name](a)
                y = h[-1].reshape(B, -1, 1, 1)
            else:
                y = s.layers[name](a)
            out[name] = y
        return y.reshape(B, -1)


def check(ini, data, C, H, W, T, V, K, B):
    """The line printed for one model (see the top)."""
    m = Described(read_model(ini), C, H, W, T, V, K)
    ps = list(m.named_parameters())
    P = sum(p.numel() for _, p in ps)
    raw = bytearray(open(data, "rb").read())
    f = torch.frombuffer(raw, dtype=torch.float32).double()
    i32 = torch.frombuffer(raw, dtype=torch.int32)
    k, o = 0, 2 * P
    with torch.no_grad():
        for _, p in ps:
            p.copy_(f[k:k + p.numel()].view_as(p))
            k += p.numel()
    if T:
        x = i32[o:o + B * T].long().view(B, T)
        o += B * T
    else:
        x = f[o:o + B * C * H * W].view(B, C, H, W)
        o += B * C * H * W
    y = i32[o:o + B].long()
    m.train()
    loss = F.cross_entropy(m(x), y)
    loss.backward()
    # a gradient that is 0 in exact arithmetic (a bias before batch norm) is float32
    # rounding noise in emu: measured against the model's largest gradient G instead
    G = max(p.grad.abs().max().item() for _, p in ps)
    worst, where = 0.0, "-"
    for name, p in ps:
        g = f[k:k + p.numel()].view_as(p)
        k += p.numel()
        t = p.grad.abs().max().item()
        d = (g - p.grad).abs().max().item() / (t if t > 1e-9 * G else max(G, 1e-30))
        if d >= worst:
            worst, where = d, name
    return "params %d loss %.17g worst %.3g at %s" % (P, loss.item(), worst, where)


def main():
    for spec in sys.argv[2:]:
        name, *dims = spec.split(":")
        path = sys.argv[1] + "/" + name
        print(name, check(path + ".ini", path + ".bin", *map(int, dims)), flush=True)


main()
