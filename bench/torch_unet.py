#!/usr/bin/env python3
"""PyTorch's time for the same U-Net shapes that bench-forward runs (batch-norm folded:
every 3x3 convolution has a bias, as in our model files), for side-by-side figures.

    torch_unet.py --width 16 --depth 5 --size 512 [--height H] [--runs 10] [--threads 2]
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
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    net = UNet([a.width << i for i in range(a.depth)]).eval()
    x = torch.randn(1, 3, a.height or a.size, a.size)
    times = []
    with torch.no_grad():
        net(x)   # warm-up
        for _ in range(a.runs):
            t0 = time.perf_counter()
            net(x)
            times.append((time.perf_counter() - t0) * 1e3)
    print(f"pytorch {torch.__version__} depth={a.depth} width={a.width} size={a.size}x{a.height or a.size} "
          f"threads={a.threads} median_ms={statistics.median(times):.2f} min_ms={min(times):.2f}")


if __name__ == "__main__":
    main()
