#!/usr/bin/python3
"""bench-core's peer: PyTorch (single thread, oneDNN where it applies) doing
the same training step as bench_core: the seed ConvNet, batch B, forward +
CrossEntropy + backward + SGD(lr 0.001, momentum 0.9). Prints
"step_samples_per_s <x>", or a SKIP line when torch is missing.
usage: /usr/bin/python3 torch_step.py [batch] [steps]"""
import sys
import os
import time

try:
    import torch
    import torch.nn as nn
except ImportError:
    print("SKIP: python3-torch not installed")
    sys.exit(0)


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(1, 16, 5, 1, 2), nn.BatchNorm2d(16), nn.ReLU(),
                                    nn.MaxPool2d(2, 2))
        self.layer2 = nn.Sequential(nn.Conv2d(16, 32, 5, 1, 2), nn.BatchNorm2d(32), nn.ReLU(),
                                    nn.MaxPool2d(2, 2))
        self.fc = nn.Linear(7 * 7 * 32, num_classes)

    def forward(self, x):
        out = self.layer2(self.layer1(x))
        return self.fc(out.reshape(out.size(0), -1))


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = ConvNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(batch, 1, 28, 28) * 2.8 - 0.8
    y = torch.randint(0, 10, (batch,))
    model.train()
    total = 0.0
    # BENCH_CLOCK=cpu: the process's CPU time (all its threads), as bench_core's
    clock = time.process_time if os.environ.get("BENCH_CLOCK") == "cpu" else time.perf_counter
    for k in range(-2, steps):
        t0 = clock()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        dt = clock() - t0
        if k >= 0:
            total += dt
    print("torch %s, 1 thread, batch %d: training step mean %.2f ms" %
          (torch.__version__, batch, total / steps * 1e3))
    print("step_samples_per_s %.1f" % (batch / (total / steps)))


if __name__ == "__main__":
    main()
