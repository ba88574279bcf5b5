#!/usr/bin/python3
"""bench-net's peer: PyTorch DDP (gloo), one process per rank, each started in
its own network namespace by test/bench/net/run.sh (GLOO_SOCKET_IFNAME set there).
The seeds' ConvNet (test/bench/core/torch_step.py's), batch 100 per rank, SGD lr
0.001 momentum 0.9, each rank its DistributedSampler(seed=0) shard as
torch_seed002.py deals them, with one of DDP's comm hooks:
  default    DDP's own allreduce of fp32 buckets
  fp16       default_hooks.fp16_compress_hook
  powersgd   powerSGD_hook, matrix_approximation_rank 2, start_powerSGD_iter 2
             (error feedback and warm start on: PowerSGDState's defaults)
The IDX files are read once into tensors and each batch taken from them by
the sampler's indices (x / 255, as ToTensor makes them), not through a
DataLoader's per-sample PIL images: the peer spends its time on the step and
the link.
HOOKS is a comma-separated list: one process group, and for each hook in turn
a run from the same initial parameters over the same batches (one start-up of
Python and torch instead of one per hook). Each run is timed as
torch_seed002.py times it: from a barrier after WARMUP steps to a barrier after
the last step; each rank reads its interface's tx counter at both barriers.
Rank 0 prints one JSON line per hook: samples/s over the timed steps (all
ranks), the timed steps, the bytes each rank sent in them, and the test
accuracy of rank 0's model after the run.

usage: torch_net.py DATA_DIR INIT_URL RANK WORLD HOOKS WARMUP STEPS
  STEPS 0 = one whole epoch (accuracy after 1 epoch); DATA_DIR holds the four
  IDX files (.gz or not), e.g. /usr/share/datasets/fashion-mnist
"""
import datetime
import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'core'))
from torch_step import ConvNet  # noqa: E402  (the seeds' model, one home; exits when torch is missing)
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd  # noqa: E402


def idx(data, name):
    for f in (name, name + '.gz'):
        p = os.path.join(data, f)
        if os.path.exists(p):
            with (gzip.open(p) if f.endswith('.gz') else open(p, 'rb')) as fh:
                return fh.read()
    sys.exit('torch_net: %s missing in %s' % (name, data))


def load(data, split):
    img = idx(data, split + '-images-idx3-ubyte')
    lab = idx(data, split + '-labels-idx1-ubyte')
    n = int.from_bytes(img[4:8], 'big')
    x = torch.frombuffer(bytearray(img[16:16 + n * 784]), dtype=torch.uint8).view(n, 1, 28, 28)
    y = torch.frombuffer(bytearray(lab[8:8 + n]), dtype=torch.uint8).long()
    return x, y


def images(x):  # as ToTensor makes them
    return x.float().div_(255.0)


def sent():  # bytes this rank has put on its link (its interface's counter)
    with open('/sys/class/net/%s/statistics/tx_bytes' % os.environ.get('GLOO_SOCKET_IFNAME', 'eth0')) as f:
        return int(f.read())


def train(hook, x, y, order, rank, world, warmup, max_steps):
    """one run from fresh parameters: (samples/s, timed steps, bytes sent by each rank, model)"""
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(ConvNet())
    if hook == 'fp16':
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif hook == 'powersgd':
        state = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=2, start_powerSGD_iter=2)
        model.register_comm_hook(state, psgd.powerSGD_hook)
    elif hook != 'default':
        sys.exit('torch_net: hook %s?' % hook)
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    steps, timed, t0 = 0, 0, None
    for b in range(0, len(order), 100):
        if steps == warmup:
            dist.barrier()
            t0, b0 = time.perf_counter(), sent()
        i = order[b:b + 100]
        loss = crit(model(images(x[i])), y[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
        if t0 is not None:
            timed += len(i)
        if max_steps and steps >= max_steps:
            break
    dist.barrier()
    dt, b1 = time.perf_counter() - t0, sent()
    each = [None] * world
    dist.all_gather_object(each, b1 - b0)
    return timed * world / dt, steps - warmup, each, model.module


def main():
    data, url, rank, world, hooks, warmup, max_steps = sys.argv[1:8]
    rank, world, warmup, max_steps = int(rank), int(world), int(warmup), int(max_steps)
    torch.set_num_threads(1)
    dist.init_process_group('gloo', init_method=url, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600))
    x, y = load(data, 'train')
    sampler = torch.utils.data.distributed.DistributedSampler(
        torch.utils.data.TensorDataset(y), num_replicas=world, rank=rank, seed=0)
    sampler.set_epoch(0)
    order = torch.tensor(list(iter(sampler)))
    if rank == 0:
        tx, ty = load(data, 't10k')
    for hook in hooks.split(','):
        sps, timed_steps, each, net = train(hook, x, y, order, rank, world, warmup, max_steps)
        if rank == 0:
            net.eval()
            with torch.no_grad():
                correct = sum((net(images(tx[k:k + 1000])).argmax(1) == ty[k:k + 1000]).sum().item()
                              for k in range(0, len(ty), 1000))
            print(json.dumps({'anchor': 'torch-ddp-' + hook, 'hook': hook, 'world': world,
                              'timed_steps': timed_steps, 'samples_per_s_global': sps,
                              'sent_bytes_per_rank': each, 'test_acc': correct / len(ty)}), flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
