# SPDX-License-Identifier: GPL-2.0
"""A few synchronized Gloo all-reduces over TCP: a real training step's
communication, for guest-exec.sh.  Prints each iteration's time on rank 0."""
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group('gloo', init_method='env://')
grad = torch.ones(256 * 1024)           # 1 MB of float32 "gradients"
for it in range(5):
    time.sleep(0.02)                     # the compute phase
    t = time.monotonic()
    dist.all_reduce(grad)
    if dist.get_rank() == 0:
        print('iter %d all_reduce %.1f ms' % (it, (time.monotonic() - t) * 1e3),
              flush=True)
dist.destroy_process_group()
