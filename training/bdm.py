"""Writer and reader of the Backdrop model format (docs/model-format.md, version 1)."""
import os
import struct
import zlib

import numpy as np

from model import tensor_shapes

MAGIC = b"BDMODEL\0"
VERSION = 1
HEADER_SIZE = 256
ENTRY_SIZE = 96
ALIGN = 64
DTYPES = {0: np.dtype("<f4"), 1: np.dtype("<f2")}


def _align(n, a=ALIGN):
    return (n + a - 1) // a * a


def write(path, depth, widths, input_size, mean, std, tensors, name="", dtype=0):
    """tensors: name -> float array (any order; written in tensor_shapes order).
    dtype: 0 = f32, 1 = f16. Returns the file's bytes."""
    shapes = tensor_shapes(depth, widths)
    if set(tensors) != set(shapes):
        raise ValueError(f"tensor names differ from the format's: {sorted(set(tensors) ^ set(shapes))}")
    npdt = DTYPES[dtype]
    entries, blobs, offset = [], [], 0
    for tname, shape in shapes.items():
        arr = np.ascontiguousarray(np.asarray(tensors[tname], dtype=np.float32))
        if arr.shape != shape:
            raise ValueError(f"{tname}: shape {arr.shape}, expected {shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{tname}: NaN or infinity")
        raw = arr.astype(npdt).tobytes()
        offset = _align(offset)
        dims = list(shape) + [0] * (4 - len(shape))
        entries.append(struct.pack("<56sII4IQQ", tname.encode(), dtype, len(shape), *dims, offset, len(raw)))
        blobs.append((offset, raw))
        offset += len(raw)
    table = b"".join(entries)
    data_offset = _align(HEADER_SIZE + len(table))
    data_size = offset
    body = bytearray(data_offset - HEADER_SIZE + data_size)
    body[:len(table)] = table
    for off, raw in blobs:
        start = data_offset - HEADER_SIZE + off
        body[start:start + len(raw)] = raw
    file_size = HEADER_SIZE + len(body)
    crc = zlib.crc32(bytes(body)) & 0xFFFFFFFF
    w8 = list(widths) + [0] * (8 - len(widths))
    header = struct.pack("<8sIIQIIII3f3f8IIIQQQI60s", MAGIC, VERSION, HEADER_SIZE, file_size, depth, 3, 1,
                         input_size, *mean, *std, *w8, len(shapes), 0, HEADER_SIZE, data_offset, data_size,
                         crc, name.encode()[:59])
    header += bytes(HEADER_SIZE - len(header))
    blob = header + bytes(body)
    assert len(blob) == file_size
    with open(path, "wb") as f:
        f.write(blob)
    return blob


def read(path):
    """Parses and checks a model file as strictly as the C loader does.
    Returns (header dict, name -> float32 array)."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < HEADER_SIZE or b[:8] != MAGIC:
        raise ValueError("not a Backdrop model (magic)")
    (version, hsize, fsize, depth, cin, cout, input_size) = struct.unpack_from("<IIQIIII", b, 8)
    mean = struct.unpack_from("<3f", b, 40)
    std = struct.unpack_from("<3f", b, 52)
    widths = struct.unpack_from("<8I", b, 64)
    count, flags, table, data, dsize, crc = struct.unpack_from("<IIQQQI", b, 96)
    name = b[132:192].split(b"\0")[0].decode()
    if version != VERSION or hsize != HEADER_SIZE or fsize != len(b):
        raise ValueError("bad version, header size or file size")
    if not 1 <= depth <= 8 or cin != 3 or cout != 1:
        raise ValueError("bad depth or channels")
    if input_size < 32 or input_size > 4096 or input_size % (1 << (depth - 1)):
        raise ValueError("bad input size")
    if any(w == 0 for w in widths[:depth]) or any(w != 0 for w in widths[depth:]):
        raise ValueError("bad widths")
    if any(s <= 0 for s in std) or flags != 0 or b[192:256] != bytes(64):
        raise ValueError("bad std, flags or reserved bytes")
    if table != HEADER_SIZE or data % ALIGN or data < table + count * ENTRY_SIZE or data + dsize != len(b):
        raise ValueError("table or data out of bounds")
    if zlib.crc32(b[table:]) & 0xFFFFFFFF != crc:
        raise ValueError("checksum mismatch")
    shapes = tensor_shapes(depth, widths[:depth])
    if count != len(shapes):
        raise ValueError(f"{count} tensors, expected {len(shapes)}")
    tensors = {}
    for i in range(count):
        e = b[table + i * ENTRY_SIZE: table + (i + 1) * ENTRY_SIZE]
        tname = e[:56].split(b"\0")[0].decode()
        dtype, ndim = struct.unpack_from("<II", e, 56)
        dims = struct.unpack_from("<4I", e, 64)
        off, nbytes = struct.unpack_from("<QQ", e, 80)
        if tname not in shapes or tname in tensors:
            raise ValueError(f"unexpected or repeated tensor {tname}")
        shape = shapes[tname]
        if dtype not in DTYPES or ndim != len(shape) or tuple(dims) != tuple(shape) + (0,) * (4 - ndim):
            raise ValueError(f"{tname}: bad dtype or shape")
        if off % ALIGN or nbytes != int(np.prod(shape)) * DTYPES[dtype].itemsize or off + nbytes > dsize:
            raise ValueError(f"{tname}: outside the data")
        arr = np.frombuffer(b, DTYPES[dtype], int(np.prod(shape)), data + off).astype(np.float32).reshape(shape)
        if not np.isfinite(arr).all():
            raise ValueError(f"{tname}: NaN or infinity")
        tensors[tname] = arr
    header = dict(depth=depth, widths=list(widths[:depth]), input_size=input_size, mean=mean, std=std,
                  name=name, file_size=fsize, tensor_count=count)
    return header, tensors


def verify(path, tensors, dtype=0):
    """Reads the file back and checks every tensor equals what was meant to be written."""
    header, back = read(path)
    for k, v in tensors.items():
        want = np.asarray(v, np.float32).astype(DTYPES[dtype]).astype(np.float32)
        if not np.array_equal(back[k], want):
            raise ValueError(f"{k} differs after read-back")
    return header, back


def write_golden(path, x, y):
    """BDGOLD1: channels/height/width, the normalised CHW input, then the HxW probabilities."""
    x = np.ascontiguousarray(x, np.float32)
    y = np.ascontiguousarray(y, np.float32)
    c, h, w = x.shape
    assert y.shape == (h, w)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"BDGOLD1\0" + struct.pack("<3I", c, h, w))
        f.write(x.astype("<f4").tobytes())
        f.write(y.astype("<f4").tobytes())


def read_golden(path):
    with open(path, "rb") as f:
        b = f.read()
    assert b[:8] == b"BDGOLD1\0"
    c, h, w = struct.unpack_from("<3I", b, 8)
    x = np.frombuffer(b, "<f4", c * h * w, 20).reshape(c, h, w)
    y = np.frombuffer(b, "<f4", h * w, 20 + 4 * c * h * w).reshape(h, w)
    assert len(b) == 20 + 4 * (c + 1) * h * w
    return x, y
