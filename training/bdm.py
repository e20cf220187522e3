# SPDX-License-Identifier: Apache-2.0
"""Writer and reader of the Backdrop model format (docs/model-format.md, version 2; reads 1)."""
import os
import tempfile
import struct
import zlib

import numpy as np

MAGIC = b"BDMODEL\0"
VERSION = 2
CHECKSUM_AT = 128
HEADER_SIZE = 256
ENTRY_SIZE = 96
ALIGN = 64
DTYPES = {0: np.dtype("<f4"), 1: np.dtype("<f2")}


def _align(n, a=ALIGN):
    return (n + a - 1) // a * a


def checksum(b, version):
    """Version 2: CRC-32 of the whole file with the checksum field as zeros; version 1: of
    everything after the header."""
    if version == 1:
        return zlib.crc32(bytes(b[HEADER_SIZE:])) & 0xFFFFFFFF
    crc = zlib.crc32(bytes(b[:CHECKSUM_AT]))
    crc = zlib.crc32(bytes(4), crc)
    return zlib.crc32(bytes(b[CHECKSUM_AT + 4:]), crc) & 0xFFFFFFFF


def write_file(path, blob):
    """Writes @blob to a temporary file beside @path, then renames it over @path: a program
    that has the old model open, or a crash mid-write, never sees half a file."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bdm-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def upgrade(path, out):
    """Rewrites a version-1 model as version 2 (the same tensors, the header checksummed).
    Checks the old checksum first; needs no PyTorch."""
    with open(path, "rb") as f:
        b = bytearray(f.read())
    version, = struct.unpack_from("<I", b, 8)
    if b[:8] != MAGIC or version != 1 or struct.unpack_from("<I", b, CHECKSUM_AT)[0] != checksum(b, 1):
        raise ValueError(f"{path} is not an intact version-1 model")
    header = dict(version=1)
    struct.pack_into("<I", b, 8, VERSION)
    struct.pack_into("<I", b, CHECKSUM_AT, checksum(b, VERSION))
    write_file(out, bytes(b))
    return header


def write(path, depth, widths, input_size, mean, std, tensors, name="", dtype=0):
    """tensors: name -> float array (any order; written in tensor_shapes order).
    dtype: 0 = f32, 1 = f16. Returns the file's bytes."""
    from model import tensor_shapes   # PyTorch; not needed to upgrade a file
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
    w8 = list(widths) + [0] * (8 - len(widths))
    header = struct.pack("<8sIIQIIII3f3f8IIIQQQI60s", MAGIC, VERSION, HEADER_SIZE, file_size, depth, 3, 1,
                         input_size, *mean, *std, *w8, len(shapes), 0, HEADER_SIZE, data_offset, data_size,
                         0, name.encode()[:59])
    header += bytes(HEADER_SIZE - len(header))
    blob = bytearray(header + bytes(body))
    assert len(blob) == file_size
    struct.pack_into("<I", blob, CHECKSUM_AT, checksum(blob, VERSION))
    blob = bytes(blob)
    write_file(path, blob)
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
    if version not in (1, VERSION) or hsize != HEADER_SIZE or fsize != len(b):
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
    if checksum(b, version) != crc:
        raise ValueError("checksum mismatch")
    from model import tensor_shapes
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
    header = dict(version=version, depth=depth, widths=list(widths[:depth]), input_size=input_size, mean=mean, std=std,
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


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Check a model file, or upgrade a version-1 one to version 2.")
    ap.add_argument("model")
    ap.add_argument("--upgrade", metavar="OUT", help="write the model as version 2 to OUT")
    args = ap.parse_args()
    if args.upgrade:
        h = upgrade(args.model, args.upgrade)
        print(f"{args.model} (version {h['version']}) -> {args.upgrade} (version {VERSION})")
    else:
        h, t = read(args.model)
        print(f"{args.model}: version {h['version']}, depth {h['depth']}, widths {h['widths']}, {len(t)} tensors")
