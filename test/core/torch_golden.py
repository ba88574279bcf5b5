#!/usr/bin/python3
"""Golden fixtures for test/core/test_golden.c, from PyTorch (python3-torch).

Builds the seed ConvNet (seed 002), initialises it with tinyring's own
initialisation (PCG32 + U(-1/sqrt(fan_in), 1/sqrt(fan_in)) in float32,
re-implemented here bit for bit, so the C test can start from
tr_model_init_params and need no weights file), runs a fixed batch and writes
test/fixtures/convnet_golden.bin:

  fwd_*   one training-mode forward + CrossEntropy + backward
  a_*     after 3 SGD steps, lr 0.02, momentum 0.9
  b_*     after 3 SGD steps, lr 0.05, momentum 0.9, weight_decay 0.01, nesterov

Format: b"TRGOLD1\\n", then records: u8 name length, name, u32 count, count
float32, all little-endian. Run: /usr/bin/python3 test/core/torch_golden.py
"""
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn

SEED = 42          # tr_model_init_params(m, SEED)
STREAM = 0x7472    # TR_INIT_STREAM in core/tr_model.c
BATCH = 8
STEPS = 3
MASK64 = (1 << 64) - 1


class Pcg32:
    """PCG32 XSH-RR, as core/tr_rng.c."""

    def __init__(self, seed, stream):
        self.state = 0
        self.inc = ((stream << 1) | 1) & MASK64
        self.u32()
        self.state = (self.state + seed) & MASK64
        self.u32()

    def u32(self):
        old = self.state
        self.state = (old * 6364136223846793005 + self.inc) & MASK64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((32 - rot) & 31))) & 0xFFFFFFFF

    def uniform(self, lo, hi):
        """lo + (hi - lo) * u in float32 with u = 24 random bits / 2^24."""
        u = np.float32(self.u32() >> 8) * np.float32(1.0 / 16777216.0)
        v = np.float32(lo + np.float32(np.float32(hi - lo) * u))
        return v if v < hi else np.float32(lo)


class ConvNet(nn.Module):
    """The seeds' ConvNet (seed 002)."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.layer1 = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
        self.layer2 = nn.Sequential(
            nn.Conv2d(16, 32, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
        self.fc = nn.Linear(7 * 7 * 32, num_classes)

    def forward(self, x):
        out = self.layer2(self.layer1(x))
        return self.fc(out.reshape(out.size(0), -1))


def tinyring_init(model):
    """tr_model_init_params: per conv/linear layer weight then bias from one
    PCG32 stream, bound = 1/sqrtf(fan_in); BN weight 1, bias 0, stats 0/1."""
    rng = Pcg32(SEED, STREAM)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.Conv2d, nn.Linear)):
                fan_in = mod.weight[0].numel()
                bound = np.float32(np.float32(1.0) / np.sqrt(np.float32(fan_in)))
                for t in (mod.weight, mod.bias):
                    vals = np.array([rng.uniform(-bound, bound) for _ in range(t.numel())],
                                    dtype=np.float32)
                    t.copy_(torch.from_numpy(vals).reshape(t.shape))
            elif isinstance(mod, nn.BatchNorm2d):
                mod.weight.fill_(1.0)
                mod.bias.fill_(0.0)
                mod.running_mean.zero_()
                mod.running_var.fill_(1.0)


def flat_params(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def flat_grads(model):
    return torch.cat([p.grad.detach().reshape(-1) for p in model.parameters()])


def flat_buffers(model):
    out = []
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            out += [mod.running_mean.reshape(-1), mod.running_var.reshape(-1)]
    return torch.cat(out)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    x = torch.rand(BATCH, 1, 28, 28, generator=gen)
    x = (x - 0.2860) / 0.3530      # scaled like normalised Fashion-MNIST
    labels = torch.randint(0, 10, (BATCH,), generator=gen)
    loss_fn = nn.CrossEntropyLoss()
    rec = []

    model = ConvNet()
    tinyring_init(model)
    heads = [p.detach().reshape(-1)[:32] for p in model.parameters()]
    rec.append(("init_head", torch.cat(heads)))
    rec.append(("input", x.reshape(-1)))
    rec.append(("labels", labels.float()))

    model.train()
    logits = model(x)
    loss = loss_fn(logits, labels)
    loss.backward()
    rec.append(("fwd_logits", logits.detach().reshape(-1)))
    rec.append(("fwd_loss", loss.detach().reshape(1)))
    rec.append(("fwd_grads", flat_grads(model)))
    rec.append(("fwd_buffers", flat_buffers(model)))

    for tag, kw in (("a", dict(lr=0.02, momentum=0.9)),
                    ("b", dict(lr=0.05, momentum=0.9, weight_decay=0.01, nesterov=True))):
        model = ConvNet()
        tinyring_init(model)
        opt = torch.optim.SGD(model.parameters(), **kw)
        model.train()
        losses = []
        for _ in range(STEPS):
            opt.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        rec.append((tag + "_losses", torch.tensor(losses)))
        rec.append((tag + "_params", flat_params(model)))
        rec.append((tag + "_buffers", flat_buffers(model)))
        model.eval()
        with torch.no_grad():
            rec.append((tag + "_eval_logits", model(x).reshape(-1)))

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "test", "fixtures", "convnet_golden.bin")
    with open(path, "wb") as f:
        f.write(b"TRGOLD1\n")
        for name, t in rec:
            a = t.detach().to(torch.float32).numpy().astype("<f4")
            f.write(struct.pack("<B", len(name)) + name.encode())
            f.write(struct.pack("<I", a.size) + a.tobytes())
    print("wrote %s (%d bytes), loss %.6f" % (path, os.path.getsize(path), rec[4][1].item()),
          file=sys.stderr)


if __name__ == "__main__":
    main()
