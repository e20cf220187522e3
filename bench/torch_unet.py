#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's time for the same U-Net shapes that bench-forward runs (batch-norm folded:
every 3x3 convolution has a bias, as in our model files), for side-by-side figures.

    torch_unet.py --width 16 --depth 5 --size 512 [--height H] [--runs 10] [--threads 2]
    torch_unet.py --device cuda --mode fp32|tf32|fp16cl|compile [--batch 4] ...

On CUDA the time is the median of CUDA-event-timed runs after warm-up; fp16cl is fp16 in
channels-last memory; compile is fp16 channels-last through torch.compile(mode='reduce-overhead').
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.enc = nn.ModuleList(double_conv(3 if i == 0 else widths[i - 1], w) for i, w in enumerate(widths))
        self.up = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
                                for i in range(len(widths) - 1))
        self.dec = nn.ModuleList(double_conv(2 * widths[i], widths[i]) for i in range(len(widths) - 1))
        self.head = nn.Conv2d(widths[0], 1, 1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        skips = []
        for i, enc in enumerate(self.enc):
            if i:
                x = self.pool(x)
            x = enc(x)
            skips.append(x)
        x = skips.pop()
        for i in reversed(range(len(self.up))):
            x = self.dec[i](torch.cat([skips[i], self.up[i](x)], 1))
        return torch.sigmoid(self.head(x))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--depth", type=int, default=5)
    p.add_argument("--size", type=int, default=512)
    p.add_argument("--height", type=int, default=0)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--mode", default="fp32", choices=["fp32", "tf32", "fp16cl", "compile"])
    p.add_argument("--batch", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    net = UNet([a.width << i for i in range(a.depth)]).eval().to(a.device)
    x = torch.randn(a.batch, 3, a.height or a.size, a.size, device=a.device)
    if a.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = a.mode == "tf32"
        torch.backends.cudnn.allow_tf32 = a.mode == "tf32"
        torch.backends.cudnn.benchmark = True
        if a.mode in ("fp16cl", "compile"):
            net = net.half().to(memory_format=torch.channels_last)
            x = x.half().to(memory_format=torch.channels_last)
        if a.mode == "compile":
            net = torch.compile(net, mode="reduce-overhead")
    times = []
    with torch.no_grad():
        for _ in range(3 if a.device == "cuda" else 1):   # warm-up (and compilation)
            net(x)
        for _ in range(a.runs):
            if a.device == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                net(x)
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                net(x)
                times.append((time.perf_counter() - t0) * 1e3)
    print(f"pytorch {torch.__version__} depth={a.depth} width={a.width} size={a.size}x{a.height or a.size} "
          f"batch={a.batch} device={a.device} mode={a.mode} threads={a.threads} "
          f"median_ms={statistics.median(times):.3f} min_ms={min(times):.3f}")


if __name__ == "__main__":
    main()
