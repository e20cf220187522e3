# SPDX-License-Identifier: Apache-2.0
"""Runs the teacher's ONNX graph in PyTorch, for machines without onnxruntime (the GPU machine).

Two parts, both small because the teacher (ISNet, docs/MODEL.md "The teacher") uses few ops:
- read_model(): a protobuf reader for the parts of an ONNX file a plain graph needs (nodes,
  attributes, initializers, inputs, outputs); numpy only, so no `onnx` package is needed;
- Graph: an interpreter of those nodes with torch ops (Conv, Relu, MaxPool, Resize, Concat,
  Add, Sigmoid, Cast, Shape, Slice, Constant, and a few shape helpers). Any other op raises.
The batch size is free: the graph's shapes are taken from the tensors at run time.
"""
import struct

import numpy as np
import torch
import torch.nn.functional as F

# ONNX TensorProto data types -> numpy
DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
          10: np.float16, 11: np.float64}
TORCH_DTYPES = {1: torch.float32, 7: torch.int64, 10: torch.float16, 11: torch.float64, 6: torch.int32,
                9: torch.bool}


# --- protobuf wire format ---------------------------------------------------------------------

def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _fields(b):
    """Yields (field number, wire type, value) of one message; value is an int for varints
    and fixed-size fields (raw bits), a memoryview for length-delimited ones."""
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wire == 2:
            ln, i = _varint(b, i)
            v = b[i:i + ln]
            i += ln
        elif wire == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError(f"protobuf wire type {wire} not supported")
        yield field, wire, v


def _ints(wire, v):
    """A repeated int64 field element: packed (wire 2) or one varint."""
    if wire == 0:
        return [_signed(v)]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(_signed(x))
    return out


def _floats(wire, v):
    if wire == 5:
        return [struct.unpack("<f", struct.pack("<I", v))[0]]
    return list(np.frombuffer(bytes(v), "<f4"))


def _tensor(b):
    dims, dtype, name, raw = [], 1, "", None
    floats, int32s, int64s = [], [], []
    for f, w, v in _fields(b):
        if f == 1:
            dims += _ints(w, v)
        elif f == 2:
            dtype = v
        elif f == 4:
            floats += _floats(w, v)
        elif f == 5:
            int32s += _ints(w, v)
        elif f == 7:
            int64s += _ints(w, v)
        elif f == 8:
            name = bytes(v).decode()
        elif f == 9:
            raw = bytes(v)
        elif f in (13, 14):
            raise ValueError(f"tensor {name}: external data is not supported")
    if dtype not in DTYPES:
        raise ValueError(f"tensor {name}: data type {dtype} not supported")
    np_type = np.dtype(DTYPES[dtype]).newbyteorder("<")
    if raw is not None:
        arr = np.frombuffer(raw, np_type).copy()
    elif dtype == 1:
        arr = np.asarray(floats, np.float32)
    elif dtype == 7:
        arr = np.asarray(int64s, np.int64)
    elif dtype == 10:  # fp16 bits kept in int32_data
        arr = np.asarray(int32s, np.uint16).view(np.float16)
    else:
        arr = np.asarray(int32s, DTYPES[dtype])
    return name, arr.reshape(dims) if dims else arr.reshape(())


def _attribute(b):
    name, value, kind = "", None, 0
    ints, floats = [], []
    for f, w, v in _fields(b):
        if f == 1:
            name = bytes(v).decode()
        elif f == 2:
            value = _floats(w, v)[0]
        elif f == 3:
            value = _signed(v)
        elif f == 4:
            value = bytes(v).decode()
        elif f == 5:
            value = _tensor(v)[1]
        elif f == 7:
            floats += _floats(w, v)
        elif f == 8:
            ints += _ints(w, v)
        elif f == 20:
            kind = v
    if kind == 7 or (value is None and ints):      # INTS
        value = ints
    elif kind == 6 or (value is None and floats):  # FLOATS
        value = floats
    return name, value


def _node(b):
    node = {"inputs": [], "outputs": [], "op": "", "name": "", "attrs": {}}
    for f, _, v in _fields(b):
        if f == 1:
            node["inputs"].append(bytes(v).decode())
        elif f == 2:
            node["outputs"].append(bytes(v).decode())
        elif f == 3:
            node["name"] = bytes(v).decode()
        elif f == 4:
            node["op"] = bytes(v).decode()
        elif f == 5:
            k, val = _attribute(v)
            node["attrs"][k] = val
    return node


def _value_name(b):
    for f, _, v in _fields(b):
        if f == 1:
            return bytes(v).decode()
    return ""


def read_model(path):
    """ONNX file -> dict(nodes, initializers {name: ndarray}, inputs, outputs)."""
    with open(path, "rb") as fh:
        blob = memoryview(fh.read())
    graph = None
    for f, _, v in _fields(blob):
        if f == 7:
            graph = v
    if graph is None:
        raise ValueError(f"{path}: no graph")
    nodes, inits, inputs, outputs = [], {}, [], []
    for f, _, v in _fields(graph):
        if f == 1:
            nodes.append(_node(v))
        elif f == 5:
            k, arr = _tensor(v)
            inits[k] = arr
        elif f == 11:
            inputs.append(_value_name(v))
        elif f == 12:
            outputs.append(_value_name(v))
    inputs = [n for n in inputs if n not in inits]
    return {"nodes": nodes, "initializers": inits, "inputs": inputs, "outputs": outputs}


# --- the interpreter --------------------------------------------------------------------------

def _topological(nodes, available):
    """Nodes in an order where each runs after the nodes it reads from. ONNX asks files for
    that order, but fp16 converters append their input casts at the end."""
    done, order, rest = set(available) | {""}, [], list(nodes)
    while rest:
        ready = [n for n in rest if all(k in done for k in n["inputs"])]
        if not ready:
            raise ValueError("the graph has a cycle or an input nobody writes")
        for n in ready:
            done.update(n["outputs"])
        order += ready
        rest = [n for n in rest if n not in ready]
    return order


def _pads2d(pads):
    """ONNX pads (top, left, bottom, right) -> torch padding when symmetric, else None."""
    if not pads:
        return (0, 0), None
    t, l, b, r = pads
    return ((t, l), None) if (t, l) == (b, r) else ((0, 0), (l, r, t, b))


class Graph:
    """g = Graph(read_model(path), device); y = g(x) -> the first output. float_type: compute
    every floating-point value in this type (e.g. float32 on a CPU without fast fp16), casts
    between float types included; default: as the graph says."""

    def __init__(self, model, device, float_type=None):
        self.nodes = _topological(model["nodes"], set(model["initializers"]) | set(model["inputs"]))
        self.float_type = float_type
        self.inputs, self.outputs = model["inputs"], model["outputs"]
        self.device = device
        self.consts = {}
        for k, arr in model["initializers"].items():
            t = torch.from_numpy(np.ascontiguousarray(arr))
            self.consts[k] = self._float(t.to(device)) if t.is_floating_point() else t
        # The last node that reads each value: it is freed after that, so that the full-size
        # feature maps of a batch do not pile up.
        self.last_use = {}
        for i, n in enumerate(self.nodes):
            for name in n["inputs"]:
                self.last_use[name] = i
        known = {"Conv", "Relu", "MaxPool", "Resize", "Concat", "Add", "Sigmoid", "Cast", "Shape", "Slice",
                 "Constant", "Mul", "Div", "Sub", "Gather", "Unsqueeze", "Identity"}
        missing = sorted({n["op"] for n in self.nodes} - known)
        if missing:
            raise ValueError(f"ops not supported: {', '.join(missing)}")

    @torch.no_grad()
    def __call__(self, x):
        env = dict(self.consts)
        env[self.inputs[0]] = x
        for i, n in enumerate(self.nodes):
            args = [env[k] if k else None for k in n["inputs"]]
            outs = self._run(n, args)
            for k, v in zip(n["outputs"], outs):
                env[k] = v
            for k in n["inputs"]:
                if k and self.last_use.get(k) == i and k not in self.consts and k not in self.outputs:
                    env.pop(k, None)
        return env[self.outputs[0]]

    def _run(self, n, a):
        op, at = n["op"], n["attrs"]
        if op == "Conv":
            w, b = a[1], a[2] if len(a) > 2 else None
            pad, explicit = _pads2d(at.get("pads"))
            x = F.pad(a[0], explicit) if explicit else a[0]
            return [F.conv2d(x, w, b, stride=tuple(at.get("strides", (1, 1))), padding=pad,
                             dilation=tuple(at.get("dilations", (1, 1))), groups=at.get("group", 1))]
        if op == "Relu":
            return [F.relu(a[0])]
        if op == "Sigmoid":
            return [torch.sigmoid(a[0])]
        if op == "MaxPool":
            pad, explicit = _pads2d(at.get("pads"))
            x = F.pad(a[0], explicit, value=float("-inf")) if explicit else a[0]
            return [F.max_pool2d(x, tuple(at["kernel_shape"]), tuple(at.get("strides", at["kernel_shape"])),
                                 pad, ceil_mode=bool(at.get("ceil_mode", 0)))]
        if op == "Resize":
            return [self._resize(a, at)]
        if op == "Concat":
            ts = [t if t.device == a[0].device else t.to(a[0].device) for t in a]
            return [torch.cat(ts, dim=at["axis"])]
        if op in ("Add", "Mul", "Div", "Sub"):
            x, y = a
            if x.device != y.device:
                y = y.to(x.device)
            return [{"Add": torch.add, "Mul": torch.mul, "Div": torch.div, "Sub": torch.sub}[op](x, y)]
        if op == "Cast":
            to = TORCH_DTYPES[at["to"]]
            return [self._float(a[0]) if to.is_floating_point and self.float_type else a[0].to(to)]
        if op == "Shape":
            return [torch.tensor(a[0].shape, dtype=torch.int64)]
        if op == "Slice":
            return [self._slice(a)]
        if op == "Constant":
            t = torch.from_numpy(np.ascontiguousarray(at["value"]))
            return [self._float(t.to(self.device)) if t.is_floating_point() else t]
        if op == "Gather":
            idx = a[1].to(a[0].device)
            return [torch.index_select(a[0], at.get("axis", 0), idx.reshape(-1)).reshape(
                a[0].shape[:at.get("axis", 0)] + idx.shape + a[0].shape[at.get("axis", 0) + 1:])]
        if op == "Unsqueeze":
            axes = at.get("axes") if "axes" in at else a[1].tolist()
            x = a[0]
            for ax in sorted(axes):
                x = x.unsqueeze(ax)
            return [x]
        if op == "Identity":
            return [a[0]]
        raise ValueError(f"op {op} not supported")

    def _float(self, t):
        return t.to(self.float_type) if self.float_type else t

    def _slice(self, a):
        x = a[0]
        starts, ends = a[1].tolist(), a[2].tolist()
        axes = a[3].tolist() if len(a) > 3 and a[3] is not None else list(range(len(starts)))
        steps = a[4].tolist() if len(a) > 4 and a[4] is not None else [1] * len(starts)
        idx = [slice(None)] * x.dim()
        for s, e, ax, st in zip(starts, ends, axes, steps):
            dim = x.shape[ax]
            s = max(0, min(dim, s + dim if s < 0 else s))
            e = max(0, min(dim, e + dim if e < 0 else e))
            idx[ax] = slice(s, e, st)
        return x[tuple(idx)]

    def _resize(self, a, at):
        x = a[0]
        mode = at.get("mode", "nearest")
        ctm = at.get("coordinate_transformation_mode", "half_pixel")
        if mode != "linear" or ctm not in ("half_pixel", "pytorch_half_pixel"):
            raise ValueError(f"Resize mode {mode}/{ctm} not supported")
        sizes = a[3] if len(a) > 3 and a[3] is not None and a[3].numel() else None
        if sizes is not None:
            out = [int(v) for v in sizes.tolist()[2:]]
            return F.interpolate(x, size=out, mode="bilinear", align_corners=False)
        scales = [float(v) for v in a[2].tolist()[2:]]
        out = [int(np.floor(d * s)) for d, s in zip(x.shape[2:], scales)]
        return F.interpolate(x, size=out, mode="bilinear", align_corners=False)
