# SPDX-License-Identifier: Apache-2.0
"""The U-Net exactly as the C engine runs it (docs/model-format.md).

Module names mirror the tensor names of the model file (enc{l}.conv0, up{l}, dec{l}.conv1,
head) so that export is a rename-free walk over the modules.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class DoubleConv(nn.Module):
    """(3x3 conv pad 1 + BatchNorm + ReLU) x 2. The convs carry no bias of their own: the
    BatchNorm shift takes that role, and folding turns it into the exported bias."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv0 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(cout)
        self.conv1 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = F.relu(self.bn0(self.conv0(x)))
        return F.relu(self.bn1(self.conv1(x)))


class UNet(nn.Module):
    def __init__(self, depth=5, base=16, input_size=512):
        super().__init__()
        assert 1 <= depth <= 8
        self.depth = depth
        self.input_size = input_size
        self.widths = [base << l for l in range(depth)]
        w = self.widths
        self.enc = nn.ModuleList(DoubleConv(3 if l == 0 else w[l - 1], w[l]) for l in range(depth))
        self.up = nn.ModuleList(nn.ConvTranspose2d(w[l + 1], w[l], 2, stride=2) for l in range(depth - 1))
        self.dec = nn.ModuleList(DoubleConv(2 * w[l], w[l]) for l in range(depth - 1))
        self.head = nn.Conv2d(w[0], 1, 1)

    @property
    def multiple(self):
        """Input height and width must be multiples of this (one 2x2 pool per level)."""
        return 1 << (self.depth - 1)

    def forward(self, x):
        """Returns logits; the engine applies the sigmoid after the head."""
        skips = []
        for l in range(self.depth):
            if l > 0:
                x = F.max_pool2d(x, 2)
            x = self.enc[l](x)
            skips.append(x)
        for l in reversed(range(self.depth - 1)):
            # concat(skip, up) in that order: the engine's dec{l}.conv0 expects it.
            x = self.dec[l](torch.cat([skips[l], self.up[l](x)], dim=1))
        return self.head(x)


def count_params(model):
    return sum(p.numel() for p in model.parameters())


def conv_flops(depth, widths, h, w):
    """Multiply-adds x 2 of the folded network (convs, transposed convs, head) at h x w."""
    flops = 0
    for l in range(depth):
        hh, ww = h >> l, w >> l
        cin = 3 if l == 0 else widths[l - 1]
        flops += 2 * hh * ww * 9 * (cin * widths[l] + widths[l] * widths[l])
    for l in range(depth - 1):
        hh, ww = h >> l, w >> l
        flops += 2 * hh * ww * widths[l + 1] * widths[l]          # 2x2 stride-2 transposed conv
        flops += 2 * hh * ww * 9 * (2 * widths[l] * widths[l] + widths[l] * widths[l])
    flops += 2 * h * w * widths[0]
    return flops


def build(config):
    """config: dict with depth, base, input_size (as stored in checkpoints)."""
    return UNet(config["depth"], config["base"], config.get("input_size", 512))


def tensor_shapes(depth, widths):
    """Name -> shape of every tensor of the folded network, as docs/model-format.md lists them."""
    w = widths
    shapes = {}
    for l in range(depth):
        shapes[f"enc{l}.conv0.weight"] = (w[l], 3 if l == 0 else w[l - 1], 3, 3)
        shapes[f"enc{l}.conv0.bias"] = (w[l],)
        shapes[f"enc{l}.conv1.weight"] = (w[l], w[l], 3, 3)
        shapes[f"enc{l}.conv1.bias"] = (w[l],)
    for l in range(depth - 1):
        shapes[f"up{l}.weight"] = (w[l + 1], w[l], 2, 2)
        shapes[f"up{l}.bias"] = (w[l],)
        shapes[f"dec{l}.conv0.weight"] = (w[l], 2 * w[l], 3, 3)
        shapes[f"dec{l}.conv0.bias"] = (w[l],)
        shapes[f"dec{l}.conv1.weight"] = (w[l], w[l], 3, 3)
        shapes[f"dec{l}.conv1.bias"] = (w[l],)
    shapes["head.weight"] = (1, w[0], 1, 1)
    shapes["head.bias"] = (1,)
    return shapes


class FoldedUNet(nn.Module):
    """The network as the engine computes it from a model file: conv + bias + ReLU, no
    batch-norm. Built from a name -> tensor dict (see tensor_shapes)."""

    def __init__(self, depth, tensors, input_size=512):
        super().__init__()
        self.depth, self.input_size = depth, input_size
        for name, t in tensors.items():
            self.register_buffer(name.replace(".", "_"), torch.as_tensor(t).clone())

    @property
    def multiple(self):
        return 1 << (self.depth - 1)

    def _t(self, name):
        return getattr(self, name.replace(".", "_"))

    def _conv(self, x, name, relu=True):
        w = self._t(name + ".weight")
        x = F.conv2d(x, w, self._t(name + ".bias"), padding=w.shape[-1] // 2)
        return F.relu(x) if relu else x

    def forward(self, x):
        skips = []
        for l in range(self.depth):
            if l > 0:
                x = F.max_pool2d(x, 2)
            x = self._conv(self._conv(x, f"enc{l}.conv0"), f"enc{l}.conv1")
            skips.append(x)
        for l in reversed(range(self.depth - 1)):
            up = F.conv_transpose2d(x, self._t(f"up{l}.weight"), self._t(f"up{l}.bias"), stride=2)
            x = torch.cat([skips[l], up], dim=1)
            x = self._conv(self._conv(x, f"dec{l}.conv0"), f"dec{l}.conv1")
        return self._conv(x, "head", relu=False)


def fold(net):
    """Batch-norm folded into the preceding (bias-free) conv:
    w' = w * gamma / sqrt(var + eps), b' = (0 - mean) * gamma / sqrt(var + eps) + beta."""
    tensors = {}

    def fold_pair(prefix, conv, bn):
        s = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
        w = conv.weight.detach().double() * s.view(-1, 1, 1, 1)
        b0 = conv.bias.detach().double() if conv.bias is not None else torch.zeros_like(s)
        tensors[prefix + ".weight"] = w.float()
        tensors[prefix + ".bias"] = ((b0 - bn.running_mean.double()) * s + bn.bias.detach().double()).float()

    for l in range(net.depth):
        fold_pair(f"enc{l}.conv0", net.enc[l].conv0, net.enc[l].bn0)
        fold_pair(f"enc{l}.conv1", net.enc[l].conv1, net.enc[l].bn1)
    for l in range(net.depth - 1):
        tensors[f"up{l}.weight"] = net.up[l].weight.detach().float().clone()
        tensors[f"up{l}.bias"] = net.up[l].bias.detach().float().clone()
        fold_pair(f"dec{l}.conv0", net.dec[l].conv0, net.dec[l].bn0)
        fold_pair(f"dec{l}.conv1", net.dec[l].conv1, net.dec[l].bn1)
    tensors["head.weight"] = net.head.weight.detach().float().clone()
    tensors["head.bias"] = net.head.bias.detach().float().clone()
    return {k: v.cpu() for k, v in tensors.items()}
