#!/usr/bin/env python3
"""Where the ink of each PNG given lies: one line a file, `width height x0 y0 x1 y1` (the
inclusive pixel bounds of every pixel that is not opaque white) or `width height empty`.

Reads what rsvg-convert writes, 8-bit RGB or RGBA, not interlaced, with nothing but the standard
library (zlib); anything else is refused with exit status 2. portfolio_figure_test.cpp renders
the portfolio's figure and asserts on these bounds."""
import struct
import sys
import zlib


def lane_add(a, b, low7, high):
    """Adds two rows held as integers, byte by byte modulo 256, without carries between bytes."""
    return ((a & low7) + (b & low7)) ^ ((a ^ b) & high)


def rows(path):
    """Yields (width, height, bytes per pixel, row) for each row, its filter undone."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, header, idat = 8, None, []
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, color_type, _, _, interlace = header
    if depth != 8 or color_type not in (2, 6) or interlace != 0:
        raise ValueError(f"bit depth {depth}, colour type {color_type}, interlace {interlace}: "
                         "only 8-bit RGB or RGBA, not interlaced, is read")
    bpp = 3 if color_type == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    if len(raw) != height * (stride + 1):
        raise ValueError(f"{len(raw)} bytes of image data for {width}x{height}")
    mask = (1 << (8 * stride)) - 1
    low7 = int.from_bytes(b"\x7f" * stride, "little")
    high = int.from_bytes(b"\x80" * stride, "little")
    zeros = bytes(stride)
    prior = zeros
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = raw[start + 1:start + 1 + stride]
        if kind == 2 and line == zeros:  # most rows of a figure: the row above, repeated
            line = prior
        elif kind in (1, 2):  # Sub and Up are byte-wise sums, done on whole rows at once
            value = int.from_bytes(line, "little")
            if kind == 2:
                value = lane_add(value, int.from_bytes(prior, "little"), low7, high)
            else:
                shift = 8 * bpp
                while shift < 8 * stride:  # the running sum along the row, in log2(width) steps
                    value = lane_add(value, (value << shift) & mask, low7, high)
                    shift *= 2
            line = value.to_bytes(stride, "little")
        elif kind in (3, 4):  # Average and Paeth depend on the byte just undone: one at a time
            out = bytearray(line)
            for x in range(stride):
                a = out[x - bpp] if x >= bpp else 0
                b = prior[x]
                if kind == 3:
                    out[x] = (out[x] + ((a + b) >> 1)) & 255
                    continue
                c = prior[x - bpp] if x >= bpp else 0
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                out[x] = (out[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = bytes(out)
        elif kind != 0:
            raise ValueError(f"row {y}: unknown filter {kind}")
        yield width, height, bpp, line
        prior = line


def ink(path):
    """Any byte short of 255 is ink: a colour, or a pixel not fully opaque."""
    size, box = None, None
    for y, (width, height, bpp, line) in enumerate(rows(path)):
        size = (width, height)
        rest = line.lstrip(b"\xff")
        if not rest:
            continue
        first = (len(line) - len(rest)) // bpp
        last = (len(line.rstrip(b"\xff")) - 1) // bpp
        box = [first, y, last, y] if box is None else [min(box[0], first), box[1],
                                                       max(box[2], last), y]
    return size, box


def main(paths):
    for path in paths:
        try:
            size, box = ink(path)
        except (OSError, ValueError, zlib.error) as e:
            print(f"png_ink.py: {path}: {e}", file=sys.stderr)
            return 2
        print(*size, *(box if box else ["empty"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
