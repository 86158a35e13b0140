# SPDX-License-Identifier: GPL-2.0
"""Synchronized Gloo all-reduces over TCP: a real training step's
communication, for guest-exec.sh.  Rank 0 prints each iteration's time.

Environment: ALLREDUCE_ITERS (default 5), ALLREDUCE_KB (gradient size in
KiB, default 1024), ALLREDUCE_COMPUTE_MS (sleep before each, default 20).
"""
import os
import time

import torch
import torch.distributed as dist

iters = int(os.environ.get('ALLREDUCE_ITERS', '5'))
kib = int(os.environ.get('ALLREDUCE_KB', '1024'))
compute = float(os.environ.get('ALLREDUCE_COMPUTE_MS', '20')) / 1e3

dist.init_process_group('gloo', init_method='env://')
grad = torch.ones(kib * 256)            # float32 "gradients"
for it in range(iters):
    time.sleep(compute)                  # the compute phase
    t = time.monotonic()
    dist.all_reduce(grad)
    if dist.get_rank() == 0:
        print('iter %d all_reduce %.1f ms' % (it, (time.monotonic() - t) * 1e3),
              flush=True)
dist.destroy_process_group()
