#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's time for one 3x3 Conv2d (+ bias + ReLU) on the seed's per-layer table, batch 4,
fp32 and fp16 channels-last, CUDA events, median of 50 after warm-up (bench-conv-cuda's peer)."""
import statistics

import torch

TABLE = [(3, 64, 512), (64, 64, 512), (64, 128, 256), (128, 128, 256), (128, 256, 128),
         (256, 256, 128), (256, 512, 64), (512, 512, 64), (512, 1024, 32), (1024, 1024, 32)]


def time_layer(conv, x):
    times = []
    with torch.no_grad():
        for r in range(60):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.relu_(conv(x))
            end.record()
            end.synchronize()
            if r >= 10:
                times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"{'layer (batch 4)':22} {'fp32 ms':>10} {'TFLOP/s':>9} {'fp16 cl ms':>10} {'TFLOP/s':>9}")
    for cin, cout, size in TABLE:
        flop = 2.0 * 9 * cin * cout * 4 * size * size
        conv = torch.nn.Conv2d(cin, cout, 3, padding=1).cuda()
        x = torch.randn(4, cin, size, size, device="cuda")
        fp32 = time_layer(conv, x)
        conv16 = conv.half().to(memory_format=torch.channels_last)
        fp16 = time_layer(conv16, x.half().to(memory_format=torch.channels_last))
        print(f"{cin}x{cout}@{size:<14} {fp32:10.3f} {flop / fp32 / 1e9:9.1f} {fp16:10.3f} {flop / fp16 / 1e9:9.1f}")


if __name__ == "__main__":
    main()
