#!/usr/bin/env python3
"""Loads a mnist_ring model file (format: README) into PyTorch's version of
the seeds' ConvNet and prints its test accuracy on DATA_DIR's t10k files.
The test compares it with what mnist_ring itself reported: the file format,
the parameter order and the BN statistics must all be right for them to agree.
usage: /usr/bin/python3 torch_check_model.py MODEL DATA_DIR"""
import gzip, os, struct, sys, zlib
import numpy as np
import torch, torch.nn as nn


def convnet():
    return nn.Sequential(
        nn.Conv2d(1, 16, 5, 1, 2), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(16, 32, 5, 1, 2), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(7 * 7 * 32, 10))


def idx(path_base):
    for p in (path_base, path_base + '.gz'):
        if os.path.exists(p):
            raw = open(p, 'rb').read()
            return gzip.decompress(raw) if p.endswith('.gz') else raw
    sys.exit('no ' + path_base)


def main(model_path, data):
    raw = open(model_path, 'rb').read()
    assert raw[:8] == b'TRINGMDL', 'magic'
    version, hdr = struct.unpack_from('<II', raw, 8)
    n_params, n_buffers = struct.unpack_from('<QQ', raw, 64)
    assert version in (1, 3) and hdr == 96, 'version/header'  # 1: before the sampler changed
    assert struct.unpack_from('<I', raw, len(raw) - 4)[0] == zlib.crc32(raw[:-4]), 'crc'
    f = np.frombuffer(raw[96:-4], '<f4')
    assert len(f) == n_params + n_buffers, 'size'
    m = convnet()
    sd = m.state_dict()
    names = [k for k in sd if k.endswith('weight') or k.endswith('bias')]
    names += [k for k in sd if k.endswith('running_mean') or k.endswith('running_var')]
    off = 0
    for k in names:
        n = sd[k].numel()
        sd[k] = torch.tensor(f[off:off + n].copy()).reshape(sd[k].shape)
        off += n
    assert off == len(f), 'parameter count'
    m.load_state_dict(sd)
    m.eval()
    im = idx(os.path.join(data, 't10k-images-idx3-ubyte'))
    lb = idx(os.path.join(data, 't10k-labels-idx1-ubyte'))
    n = struct.unpack_from('>I', im, 4)[0]
    x = torch.tensor(np.frombuffer(im, np.uint8, offset=16).reshape(n, 1, 28, 28).astype(np.float32) / 255.0)
    y = torch.tensor(np.frombuffer(lb, np.uint8, offset=8).astype(np.int64))
    with torch.no_grad():
        correct = sum((m(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum().item() for i in range(0, n, 1000))
    print('%.4f' % (correct / n))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
