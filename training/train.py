#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Train the portrait U-Net.

    train.py --data .data --out runs/w16 --base 16 --steps 9000
    train.py --data .data --out runs/w16 --base 16 --minutes 14   # fit a wall-clock budget

With --minutes the run measures its speed over the first steps, fixes the number of steps that
fit, and logs it ("total steps N"); passing that N as --steps reproduces the same schedule.
At the end it scores every validation split at the inference pre-processing (val.json).
"""
import argparse
import json
import math
import os
import random
import re
import time

import numpy as np
import torch
import torch.nn.functional as F

import data
import evaluate
import model as unet
from preprocess import predict


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="root holding the data sets (packed or original)")
    ap.add_argument("--teacher", help="teacher labels, TEACHER/<set>/<stem>.png (teacher/label_onnxruntime.py): "
                    "the labels of people-unlabelled, and a second label on every record that has one")
    ap.add_argument("--out", required=True, help="folder for the log, checkpoints and val.json")
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--base", type=int, default=16, help="width of level 0; level l has base * 2^l")
    ap.add_argument("--input-size", type=int, default=512, help="long side at inference")
    ap.add_argument("--crop", type=int, default=384, help="training canvas side")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--warmup", type=int, default=400, help="steps of linear warm-up")
    ap.add_argument("--steps", type=int, help="total optimiser steps")
    ap.add_argument("--minutes", type=float, help="wall-clock budget instead of --steps (validation included)")
    ap.add_argument("--val-minutes", type=float, default=1.0, help="time kept for the final validation")
    ap.add_argument("--mix", help="sample mix overrides, e.g. 'scene=0.27,lfw=0.15,negative=0.15,davis=0.4' "
                    "(defaults: data.MIX)")
    ap.add_argument("--subjects", action="store_true",
                    help="composites label only subjects: pasted people under half the tallest one's height "
                    "are background (passers-by), as in the labelled sets")
    ap.add_argument("--engine-scale", action="store_true",
                    help="scenes at the scale the engine runs them (a photo under --input-size keeps its "
                    "size) and mostly in padding rather than enlarged to fill the canvas; with --crop 512, "
                    "a fine-tune at the inference scale")
    ap.add_argument("--tumble", type=float, default=0.0,
                    help="share of pasted people turned by any angle (data.TrainSamples); 0: none")
    ap.add_argument("--tilt", type=float, default=0.0,
                    help="share of placed photos turned by up to 40 degrees (data.TrainSamples); 0: none")
    ap.add_argument("--init", help="start from this checkpoint's weights (same architecture); fresh schedule")
    ap.add_argument("--init-bdm", help="start from a model file (.bdm, batch-norm folded): its shape replaces "
                    "--depth/--base/--input-size, and the batch norms stay frozen at identity (train_bdm)")
    ap.add_argument("--decisive", type=float, default=0.0,
                    help="weight of the penalty on undecided predictions away from the edges (ghosts)")
    ap.add_argument("--ema", type=float, default=0.0,
                    help="also keep an exponential moving average of the weights with this decay (e.g. 0.999), "
                         "saved as ema.pt and scored into val-ema.json; 0: none")
    ap.add_argument("--workers", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-val", type=int, default=0, help="score at most this many images per set (0: all)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    if (args.steps is None) == (args.minutes is None):
        ap.error("give exactly one of --steps and --minutes")
    return args


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def loss_fn(logits, target, weight, decisive=0.0):
    """Weighted BCE with the band around each edge counted 4x, + soft IoU over the image,
    + soft IoU inside the edge band (so the edges weigh as much as the bulk does), + with
    `decisive`, the mean of 4p(1-p) away from the edges: a half-kept region (a ghost) costs
    there even when its BCE is balanced between the two answers."""
    logits = logits.float()
    hard = (target > 0.5).float()
    # Edge band: dilation minus erosion of the hard mask, 5x5 (a few pixels either side).
    dil = F.max_pool2d(hard, 5, 1, 2)
    ero = -F.max_pool2d(-hard, 5, 1, 2)
    edge = dil - ero
    wb = weight * (1 + 3 * edge)
    bce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    bce = (bce * wb).sum() / wb.sum().clamp_min(1e-6)
    p = torch.sigmoid(logits)

    def soft_iou(w):
        inter = (w * p * target).sum((1, 2, 3))
        union = (w * (p + target - p * target)).sum((1, 2, 3))
        return (1 - (inter + 1) / (union + 1)).mean()

    loss = bce + soft_iou(weight) + 0.5 * soft_iou(weight * edge)
    if decisive:
        # 1% of the canvas diagonal either side of an edge, as the ghost share counts it
        r = max(2, round(0.01 * math.hypot(*hard.shape[-2:])))
        far = 1 - (F.max_pool2d(hard, 2 * r + 1, 1, r) + F.max_pool2d(1 - hard, 2 * r + 1, 1, r) - 1)
        wf = weight * far
        loss = loss + decisive * (wf * 4 * p * (1 - p)).sum() / wf.sum().clamp_min(1e-6)
    return loss


def lr_at(step, total, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    if total is None:
        return args.lr
    t = min(1.0, (step - args.warmup) / max(1, total - args.warmup))
    return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * t)))


def collate(batch):
    return [torch.from_numpy(np.stack(x)) for x in zip(*batch)]


def to_device(batch, device, mean, std):
    img, target, weight, valid = (b.to(device, non_blocking=True) for b in batch)
    valid = valid.unsqueeze(1).float()
    x = (img.permute(0, 3, 1, 2).float() / 255.0 - mean) / std
    x = (x * valid).contiguous(memory_format=torch.channels_last)  # padding: zeros after normalising
    return x, target.unsqueeze(1).float() / 255.0, weight.unsqueeze(1).float() / 100.0


@torch.no_grad()
def validate(net, val_sets, device, max_per_set=0):
    """Per-set means of IoU, boundary IoU, MAE (person fraction for negatives), each image
    pre-processed as the engine does; first the hard web-like split (data.hard_web), made of
    the photos with people of data.HARD_WEB_SETS. people-unlabelled is scored against the
    teacher's labels: agreement with the teacher, not accuracy."""
    net.eval()
    out, hard = {}, []
    for name, records in val_sets.items():
        rows = []
        for r in records[:max_per_set or None]:
            from PIL import Image
            prob = predict(net, Image.fromarray(r.image), net.input_size, device)
            gt = None if r.mask is None else r.mask.astype(np.float32) / 255.0
            rows.append({"stem": r.stem, **evaluate.score(prob, gt)})
            if name in data.HARD_WEB_SETS and r.bbox is not None:
                hard.append(rows[-1])
        if rows:
            out[name] = evaluate.summarise(rows)
    net.train()
    return ({"hard-web": evaluate.summarise(hard)} if hard else {}) | out


def unfold_bdm(path):
    """A UNet holding a model file's folded weights: each conv takes the folded weight, its
    batch norm becomes the identity plus the folded bias (mean 0, variance 1 - eps, scale 1)."""
    import bdm
    header, tensors = bdm.read(path)
    config = {"depth": header["depth"], "base": header["widths"][0], "input_size": header["input_size"]}
    net = unet.build(config)
    if net.widths != header["widths"]:
        raise SystemExit(f"{path}: widths {header['widths']} are not a base * 2^l U-Net")
    sd = net.state_dict()
    for file_name, arr in tensors.items():
        t = torch.from_numpy(arr)
        name = re.sub(r"^(enc|dec|up)(\d+)\.", r"\1.\2.", file_name)  # enc0.conv0 -> enc.0.conv0
        if name.endswith(".bias") and name.replace(".conv", ".bn").replace(".bias", ".running_mean") in sd:
            bn = name.replace(".conv", ".bn").rsplit(".", 1)[0]
            sd[bn + ".bias"].copy_(t)
            sd[bn + ".weight"].fill_(1.0)
            sd[bn + ".running_mean"].zero_()
            sd[bn + ".running_var"].fill_(1.0 - net.enc[0].bn0.eps)
        else:
            sd[name].copy_(t)
    net.load_state_dict(sd)
    return net, config, header


@torch.no_grad()
def reinflate_batch_norm(net, batches, target_std=0.03):
    """Gives an unfolded network (unfold_bdm) working batch norms again, without changing what
    it computes: each conv's output statistics (mean mu, std sigma per channel, over `batches`
    of inputs) become the batch norm's running statistics, with scale sigma and shift
    bias + mu, so that (z - mu) / sigma * sigma + bias + mu = z + bias. The conv weights are
    rescaled to a typical trained size (std target_std) on the way: a folded weight can be
    a hundred times smaller than the trained one, and Adam's steps of size lr would then move
    it far faster than the shipped recipe did."""
    pairs = [(blk.conv0, blk.bn0) for blk in list(net.enc) + list(net.dec)] + \
            [(blk.conv1, blk.bn1) for blk in list(net.enc) + list(net.dec)]
    sums = {id(c): [0.0, 0.0, 0] for c, _ in pairs}

    def hook(conv, _, out):
        z = out.float()
        acc = sums[id(conv)]
        acc[0] = acc[0] + z.sum((0, 2, 3))
        acc[1] = acc[1] + (z * z).sum((0, 2, 3))
        acc[2] += z.numel() // z.shape[1]

    handles = [c.register_forward_hook(hook) for c, _ in pairs]
    was = net.training
    net.eval()
    for x in batches:
        net(x)
    for h in handles:
        h.remove()
    for conv, bn in pairs:
        s, ss, n = sums[id(conv)]
        mu = s / n
        sigma = (ss / n - mu * mu).clamp_min(1e-8).sqrt()
        k = target_std / conv.weight.float().std().clamp_min(1e-12)
        conv.weight.mul_(k)
        bn.running_mean.copy_(k * mu)
        bn.running_var.copy_((k * sigma) ** 2 - bn.eps)
        bn.weight.copy_(sigma)
        bn.bias.add_(mu)
    net.train(was)


def save(path, net, config, step):
    torch.save({"config": config, "step": step, "model": net.state_dict()}, path + ".tmp")
    os.replace(path + ".tmp", path)


class WeightAverage:
    """Exponential moving average of a network's weights and batch-norm statistics, started
    after the warm-up: a fine-tune's last steps wander around a minimum, and their average
    usually sits nearer its middle than any one of them."""

    def __init__(self, net, decay):
        self.decay = decay
        self.state = {k: v.detach().clone() for k, v in net.state_dict().items()}

    @torch.no_grad()
    def update(self, net):
        cur = net.state_dict()
        floats = [k for k, v in self.state.items() if v.is_floating_point()]
        torch._foreach_lerp_([self.state[k] for k in floats], [cur[k] for k in floats], 1 - self.decay)
        for k, v in self.state.items():
            if not v.is_floating_point():
                v.copy_(cur[k])

    def copy_to(self, net):
        net.load_state_dict(self.state)


def main():
    args = parse_args()
    t_start = time.time()
    seed_everything(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log_f = open(os.path.join(args.out, "log.txt"), "a")

    def log(msg):
        line = f"[{time.time() - t_start:7.1f}s] {msg}"
        print(line, flush=True)
        log_f.write(line + "\n")
        log_f.flush()

    log(f"args {vars(args)}")
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True

    # Sets marked zoom keep their larger photos for training, so that close-up crops stay sharp.
    train_sets = {n: data.load_set(args.data, n, "train",
                                   max_side=2 * args.input_size if data.SETS[n].get("zoom") else args.input_size,
                                   teacher_dir=args.teacher)
                  for n in data.SETS}
    val_sets = {n: data.load_set(args.data, n, "val", max_side=args.input_size, teacher_dir=args.teacher)
                for n in data.SETS}
    log("train " + ", ".join(f"{n} {len(v)}" for n, v in train_sets.items()))
    log("val " + ", ".join(f"{n} {len(v)}" for n, v in val_sets.items()))
    objects = data.load_objects(args.data, max_side=args.crop)
    log(f"objects {len(objects)}")

    samples = data.TrainSamples(train_sets, size=args.crop, seed=args.seed, infer_side=args.input_size,
                                 mix=data.parse_mix(args.mix), objects=objects, subjects=args.subjects,
                                 engine_scale=args.engine_scale, tumble=args.tumble, tilt=args.tilt)
    log(f"mix {samples.mix}")
    loader = torch.utils.data.DataLoader(
        samples, batch_size=args.batch, shuffle=False, num_workers=args.workers, drop_last=True,
        pin_memory=device.type == "cuda", persistent_workers=args.workers > 0,
        prefetch_factor=6 if args.workers > 0 else None,
        collate_fn=collate)

    config = {"depth": args.depth, "base": args.base, "input_size": args.input_size}
    mean = torch.tensor(unet.IMAGENET_MEAN, device=device).view(1, 3, 1, 1)
    std = torch.tensor(unet.IMAGENET_STD, device=device).view(1, 3, 1, 1)
    if args.init_bdm:
        net, config, header = unfold_bdm(args.init_bdm)
        net = net.to(device).to(memory_format=torch.channels_last)
        calib_iter = iter(torch.utils.data.DataLoader(
            data.TrainSamples(train_sets, size=args.crop, seed=args.seed + 1000, infer_side=args.input_size,
                              mix=data.parse_mix(args.mix), objects=objects),
            batch_size=args.batch, num_workers=args.workers, collate_fn=collate))
        calib = [to_device(next(calib_iter), device, mean, std)[0] for _ in range(8)]
        x0 = calib[0][:4]
        with torch.no_grad():
            before = torch.sigmoid(net.eval()(x0))
        reinflate_batch_norm(net, calib)
        with torch.no_grad():
            after = torch.sigmoid(net.eval()(x0))
        net.train()
        del calib_iter, calib
        log(f"initialised from {args.init_bdm} ({header['name']}, widths {header['widths']}); batch norms "
            f"re-inflated from 8 batches, max |dp| {(after - before).abs().max().item():.2e}")
    else:
        net = unet.build(config).to(device).to(memory_format=torch.channels_last)
    if args.init:
        ck = torch.load(args.init, map_location=device)
        if ck["config"] != config:
            raise SystemExit(f"--init {args.init} is a {ck['config']} network, not {config}")
        net.load_state_dict(ck["model"])
        log(f"initialised from {args.init} (its step {ck['step']})")
    log(f"model widths {net.widths}, {unet.count_params(net)} parameters")
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    amp = device.type == "cuda"  # bf16 autocast: no loss scaling needed

    total = args.steps
    budget = args.minutes * 60 if args.minutes else None
    # Steps between which the speed is measured when fitting a budget: once the loader's
    # prefetched batches are used up (before that, steps run faster than the loader can feed
    # them: stage 2 of the shipped model overran its budget by 10% that way), and within or
    # just after the warm-up, while the learning rate does not depend on the total yet.
    prefetched = args.workers * 6
    calib = (max(args.warmup // 4, prefetched + 20), max(args.warmup // 4, prefetched + 20) + 200)
    ckpt = os.path.join(args.out, "last.pt")
    ema_ckpt = os.path.join(args.out, "ema.pt")
    ema = None
    t_calib = t_ckpt = time.time()
    t_log, loss_acc = time.time(), 0.0
    step = 0
    for batch in loader:
        if total is not None and step >= total:
            break
        x, target, weight = to_device(batch, device, mean, std)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, args)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            logits = net(x)
        loss = loss_fn(logits, target, weight, args.decisive)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss_acc += loss.item() if step % 10 == 0 else 0.0
        step += 1
        if args.ema and step >= args.warmup:
            if ema is None:
                ema = WeightAverage(net, args.ema)
            ema.update(net)

        if budget is not None and total is None:
            if step == calib[0]:
                t_calib = time.time()
            elif step == calib[1]:
                per_step = (time.time() - t_calib) / (calib[1] - calib[0])
                left = budget - args.val_minutes * 60 - (time.time() - t_start)
                total = max(step + 1, step + int(left / per_step))
                log(f"{per_step * 1000:.1f} ms/step -> total steps {total}")
        if budget is not None and time.time() - t_start > 1.05 * budget - args.val_minutes * 60:
            log(f"out of time at step {step} of {total}: stopping early")  # safety net only
            break
        if step % 100 == 0:
            dt = time.time() - t_log
            log(f"step {step}/{total or '?'}  loss {loss_acc / 10:.4f}  lr {opt.param_groups[0]['lr']:.2e}  "
                f"{100 * args.batch / dt:.0f} samples/s")
            t_log, loss_acc = time.time(), 0.0
        if time.time() - t_ckpt > 180:
            save(ckpt, net, config, step)
            t_ckpt = time.time()
    save(ckpt, net, config, step)
    if ema is not None:
        torch.save({"config": config, "step": step, "model": ema.state, "ema": args.ema}, ema_ckpt + ".tmp")
        os.replace(ema_ckpt + ".tmp", ema_ckpt)
    log(f"trained {step} steps in {time.time() - t_start:.0f}s; validating")
    if device.type == "cuda":  # score in plain fp32, as the engine computes
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    res = validate(net, val_sets, device, args.max_val)
    for n, r in res.items():
        log(f"val {n}: " + "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    with open(os.path.join(args.out, "val.json"), "w") as f:
        json.dump({"steps": step, "seconds": time.time() - t_start, "config": config, "val": res}, f, indent=1)
    if ema is not None:
        ema.copy_to(net)
        res = validate(net, val_sets, device, args.max_val)
        for n, r in res.items():
            log(f"val-ema {n}: " + "  ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                                         for k, v in r.items()))
        with open(os.path.join(args.out, "val-ema.json"), "w") as f:
            json.dump({"steps": step, "ema": args.ema, "config": config, "val": res}, f, indent=1)
    log("done")
    os._exit(0)  # do not wait on the persistent loader workers


if __name__ == "__main__":
    main()
