#!/usr/bin/env python3
"""make_corpus.py - write the loader test files (python3 standard library only).

tests/corpus/  malformed files, one rejection class each; EXPECTED.tsv maps
               every file to a phrase its error message must contain.
tests/data/    small valid files in every format, all holding POINTS below.

Run from anywhere: python3 tests/corpus/make_corpus.py
The output is committed; rerun only after changing this script.
"""
import os
import struct

CORPUS = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(CORPUS), "data")

# Exactly representable in float32, so every format must load them bit for bit
# (tests/test_io.c holds the same table).
POINTS = [(1.5, -2.25, 3.0), (0.125, 4.0, -8.5), (100.0, 200.5, -0.0625)]

PLY_XYZ = b"property float x\nproperty float y\nproperty float z\n"
expected = []


def write(folder, name, data):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def bad(name, phrase, data):
    write(CORPUS, name, data)
    expected.append((name, phrase))


def ply_header(fmt, count, props=PLY_XYZ, before=b"", after=b""):
    return (b"ply\nformat " + fmt.encode() + b" 1.0\n" + before + b"element vertex "
            + str(count).encode() + b"\n" + props + after + b"end_header\n")


def le_floats(points):
    return b"".join(struct.pack("<3f", *p) for p in points)


def ascii_rows(points):
    return "".join("%r %r %r\n" % p for p in points)


def valid_files():
    # ascii PLY: comments, an element before vertex, extra and list properties
    # in the vertex, a face element after it.
    props = (b"property uchar red\nproperty float x\nproperty list uchar float extra\n"
             b"property float32 y\nproperty int label\nproperty float z\n")
    rows = "".join("7 %r 2 0.5 0.25 %r -3 %r\n" % p for p in POINTS)
    write(DATA, "ascii_extra.ply",
          ply_header("ascii", 3, props,
                     before=b"comment made by make_corpus.py\nobj_info test\n"
                            b"element camera 1\nproperty float fov\n"
                            b"property list uchar int ids\n",
                     after=b"element face 1\nproperty list uchar int vertex_indices\n")
          + ("60.0 2 1 2\n" + rows + "3 0 1 2\n").encode())
    # big-endian doubles with an extra ushort, faces after the vertices.
    write(DATA, "be_double.ply",
          ply_header("binary_big_endian", 3,
                     b"property double x\nproperty ushort flags\nproperty float64 y\n"
                     b"property double z\n",
                     after=b"element face 1\nproperty list uchar int vertex_indices\n")
          + b"".join(struct.pack(">dHdd", p[0], 9, p[1], p[2]) for p in POINTS)
          + struct.pack(">B3i", 3, 0, 1, 2))
    # little endian, a list-bearing element before the vertices.
    write(DATA, "le_prefix.ply",
          ply_header("binary_little_endian", 3,
                     b"property int8 tag\nproperty float32 x\nproperty float32 y\n"
                     b"property float32 z\n",
                     before=b"element group 2\nproperty list uchar int members\n")
          + struct.pack("<B2iB", 2, 5, 6, 0)
          + b"".join(struct.pack("<b3f", -1, *p) for p in POINTS))
    # little endian with a list property inside the vertex element.
    lists = [(), (0.5, 0.25), (7.0,)]
    write(DATA, "vertex_list.ply",
          ply_header("binary_little_endian", 3,
                     b"property float x\nproperty list uchar float extra\n"
                     b"property float y\nproperty float z\n")
          + b"".join(struct.pack("<fB%dfff" % len(l), p[0], len(l), *l, p[1], p[2])
                     for p, l in zip(POINTS, lists)))
    write(DATA, "ascii.pcd",
          "# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS x y z rgb\n"
          "SIZE 4 4 4 4\nTYPE F F F U\nCOUNT 1 1 1 1\nWIDTH 3\nHEIGHT 1\n"
          "VIEWPOINT 0 0 0 1 0 0 0\nPOINTS 3\nDATA ascii\n"
          + "".join("%r %r %r 4278190335\n" % p for p in POINTS))
    # binary: double x y z after a 3-float normal, then a byte; no POINTS line.
    write(DATA, "binary.pcd",
          b"VERSION .7\nFIELDS normal x y z label\nSIZE 4 8 8 8 1\nTYPE F F F F U\n"
          b"COUNT 3 1 1 1 1\nWIDTH 3\nHEIGHT 1\nDATA binary\n"
          + b"".join(struct.pack("<3f3dB", 0, 0, 1, *p, 200) for p in POINTS))
    write(DATA, "points.csv", "x,y,z,intensity\n# a comment\n"
          + "".join("%r,%r,%r,12\n" % p for p in POINTS))
    write(DATA, "normals.xyz", "# x y z nx ny nz\n\n"
          + "".join("%r\t%r  %r 0 0 1\n" % p for p in POINTS) + "\n")
    write(DATA, "scan.pts", "3\n" + "".join("%r %r %r -1200 10 20 30\n" % p for p in POINTS))
    write(DATA, "scan.bin", b"".join(struct.pack("<4f", *p, 0.5) for p in POINTS))


def ply_corpus():
    data = le_floats(POINTS)
    bad("ply_bad_magic.ply", "no 'ply' magic", b"plx\n" + ply_header("ascii", 3)[4:])
    bad("ply_not_ply.ply", "no 'ply' magic", "hello world\n")
    bad("ply_empty.ply", "empty file", b"")
    bad("ply_truncated_binary.ply", "ends inside vertex 2 of 3",
        ply_header("binary_little_endian", 3) + data[:30])
    # Counts within the limit that the file cannot hold: refused before any
    # allocation (2^31 - 1 float32 points would be 24 GiB).
    bad("ply_lying_count.ply", "ends inside vertex 3 of 2147483647",
        ply_header("binary_little_endian", (1 << 31) - 1) + data)
    bad("ply_lying_count_ascii.ply", "cannot fit",
        ply_header("ascii", (1 << 31) - 1) + ascii_rows(POINTS).encode())
    bad("ply_count_over_limit.ply", "need 1..",
        ply_header("binary_little_endian", 1 << 40) + data)
    bad("ply_zero_vertices.ply", "0 vertices", ply_header("binary_little_endian", 0))
    bad("ply_header_only.ply", "ends inside vertex 0 of 3", ply_header("binary_big_endian", 3))
    bad("ply_no_end_header.ply", "before 'end_header'",
        ply_header("ascii", 3)[:-len(b"end_header\n")])
    bad("ply_missing_x.ply", "no 'x' property",
        ply_header("ascii", 3, b"property float y\nproperty float z\nproperty float w\n")
        + ascii_rows(POINTS).encode())
    bad("ply_list_x.ply", "'x' is a list",
        ply_header("ascii", 1, b"property list uchar float x\nproperty float y\n"
                   b"property float z\n") + b"1 2 3 4\n")
    bad("ply_no_vertex.ply", "no 'vertex' element",
        b"ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int v\nend_header\n"
        b"3 0 1 2\n")
    bad("ply_no_format.ply", "no 'format' line",
        b"ply\nelement vertex 1\n" + PLY_XYZ + b"end_header\n1 2 3\n")
    bad("ply_unknown_format.ply", "unknown PLY format",
        ply_header("binary_middle_endian", 3) + data)
    bad("ply_unknown_type.ply", "unknown property type",
        ply_header("ascii", 1, b"property float128 x\nproperty float y\nproperty float z\n")
        + b"1 2 3\n")
    bad("ply_unknown_keyword.ply", "unknown header keyword",
        ply_header("ascii", 1, after=b"elemnt face 2\n") + b"1 2 3\n")
    bad("ply_bad_count.ply", "not a non-negative integer",
        ply_header("ascii", -3) + ascii_rows(POINTS).encode())
    bad("ply_duplicate_x.ply", "declared twice",
        ply_header("ascii", 1, PLY_XYZ + b"property float x\n") + b"1 2 3 4\n")
    bad("ply_nul_in_header.ply", "NUL byte",
        ply_header("ascii", 1, before=b"comment \x00\n") + b"1 2 3\n")
    bad("ply_nan_ascii.ply", "NaN y coordinate",
        ply_header("ascii", 3) + b"1 2 3\n4 nan 6\n7 8 9\n")
    bad("ply_inf_binary.ply", "infinite z coordinate",
        ply_header("binary_little_endian", 3) + le_floats(POINTS[:2])
        + struct.pack("<3f", 1, 2, float("inf")))
    bad("ply_double_out_of_range.ply", "out-of-range x coordinate",
        ply_header("binary_big_endian", 1, b"property double x\nproperty double y\n"
                   b"property double z\n") + struct.pack(">3d", 1e300, 0, 0))
    bad("ply_ascii_non_numeric.ply", "y 'five' is not a number",
        ply_header("ascii", 3) + b"1 2 3\n4 five 6\n7 8 9\n")
    bad("ply_ascii_short_line.ply", "fewer values",
        ply_header("ascii", 3) + b"1.5 2.5 3.5\n4.5 5.5\n7.5 8.5 9.5\n")
    bad("ply_ascii_long_line.ply", "more values",
        ply_header("ascii", 3) + b"1 2 3\n4 5 6 7\n7 8 9\n")
    bad("ply_ascii_truncated.ply", "ends before vertex 2 of 3",
        ply_header("ascii", 3) + b"1.5 2.5 3.5\n4.5 5.5 6.5\n")
    bad("ply_prefix_list_truncated.ply", "ends inside group 0 of 1",
        ply_header("binary_little_endian", 3,
                   before=b"element group 1\nproperty list uint int members\n")
        + struct.pack("<I", 1000000) + data)


def pcd_header(fields="x y z", size="4 4 4", type_="F F F", points=3, data="binary",
               width=None):
    width = points if width is None else width
    lines = ["VERSION 0.7", "FIELDS " + fields, "SIZE " + size, "TYPE " + type_,
             "WIDTH %d" % width, "HEIGHT 1", "POINTS %d" % points, "DATA " + data]
    return ("\n".join(lines) + "\n").encode()


def pcd_corpus():
    data = le_floats(POINTS)
    bad("pcd_no_x.pcd", "FIELDS has no 'x'", pcd_header(fields="a y z") + data)
    bad("pcd_duplicate_x.pcd", "field 'x' named twice",
        pcd_header(fields="x y z x", size="4 4 4 4", type_="F F F F") + le_floats(POINTS) * 2)
    bad("pcd_truncated_binary.pcd", "ends inside point 1 of 3", pcd_header() + data[:20])
    bad("pcd_compressed.pcd", "unsupported", pcd_header(data="binary_compressed") + data)
    bad("pcd_unknown_data.pcd", "unknown PCD data", pcd_header(data="hexadecimal") + data)
    bad("pcd_nan_ascii.pcd", "NaN x coordinate",
        pcd_header(data="ascii") + b"1 2 3\nnan 5 6\n7 8 9\n")
    bad("pcd_size_mismatch.pcd", "SIZE has 2", pcd_header(size="4 4") + data)
    bad("pcd_points_mismatch.pcd", "differs from WIDTH", pcd_header(width=4) + data)
    bad("pcd_no_data_line.pcd", "before the DATA line", pcd_header()[:-len(b"DATA binary\n")])
    bad("pcd_lying_points.pcd", "cannot fit", pcd_header(points=1 << 30, data="ascii")
        + b"1 2 3\n")
    bad("pcd_count_huge.pcd", "COUNT '1000000000' is not an integer in 1..1048576",
        pcd_header().replace(b"WIDTH", b"COUNT 1000000000 1 1\nWIDTH") + data)
    bad("pcd_x_integer.pcd", "must be TYPE F", pcd_header(type_="I F F") + data)
    bad("pcd_f2.pcd", "TYPE F of SIZE 2", pcd_header(size="2 4 4") + data)
    bad("pcd_unknown_keyword.pcd", "unknown header keyword",
        b"VERSION 0.7\nCOLOURS red\n" + pcd_header()[len(b"VERSION 0.7\n"):] + data)
    bad("pcd_ascii_missing_value.pcd", "fewer than 3 values",
        pcd_header(data="ascii") + b"1.5 2.5 3.5\n4.5 5.5\n7.5 8.5 9.5\n")
    bad("pcd_zero_points.pcd", "no points", pcd_header(points=0))
    bad("pcd_no_fields.pcd", "no FIELDS line",
        b"VERSION 0.7\nWIDTH 3\nHEIGHT 1\nPOINTS 3\nDATA ascii\n1 2 3\n")
    bad("pcd_not_pcd.pcd", "not a PCD file", "x y z\n1 2 3\n")


def text_corpus():
    bad("xyz_non_numeric.xyz", "'abc' is not a number", "1 2 3\n4 abc 6\n")
    bad("xyz_two_columns.xyz", "2 columns", "1 2 3\n4 5\n")
    bad("xyz_inf.xyz", "infinite z coordinate", "1 2 3\n4 5 -inf\n")
    bad("xyz_overflow.txt", "infinite x coordinate", "1e999 2 3\n")
    bad("xyz_only_comments.xyz", "no points", "# nothing\n\n# here\n")
    bad("xyz_empty.xyz", "empty file", "")
    bad("csv_bad_cell.csv", "'six' is not a number", "x,y,z\n1,2,3\n4,5,six\n")
    bad("pts_bad_count.pts", "1 column", "3\n1 2 3\n7\n")
    bad("kitti_size.bin", "not a multiple of 16", struct.pack("<5f", 1, 2, 3, 0, 9))
    bad("kitti_nan.bin", "NaN y coordinate",
        struct.pack("<4f", 1, 2, 3, 0) + struct.pack("<4f", 1, float("nan"), 3, 0))
    bad("kitti_empty.bin", "empty file", b"")
    bad("unknown_format.dat", "unknown format", "1 2 3\n")


def hostile_corpus():
    """What a hostile sweep found: a NUL byte in a text body (the rest of the
    line was ignored), and .pts count lines that do not fit an integer
    (converting them was undefined behaviour)."""
    bad("xyz_nul_body.xyz", "NUL byte in the line", b"1 2 3\n4 5\x00 9\n7 8 9\n")
    bad("ply_ascii_nul_body.ply", "NUL byte in the line",
        ply_header("ascii", 3) + b"1 2 3\n4 5 6\x00junk\n7 8 9\n")
    bad("pcd_ascii_nul_body.pcd", "NUL byte in the line",
        pcd_header(data="ascii") + b"1 2 3\n4\x00 5 6\n7 8 9\n")
    bad("pts_inf_count.pts", "1 column", "1e999\n1 2 3\n")
    bad("pts_huge_count.pts", "1 column", "1e30\n1 2 3\n")
    bad("pts_overflow.pts", "infinite x coordinate", "1e999 2 3\n")


def main():
    os.makedirs(DATA, exist_ok=True)
    valid_files()
    ply_corpus()
    pcd_corpus()
    text_corpus()
    hostile_corpus()
    with open(os.path.join(CORPUS, "EXPECTED.tsv"), "w") as f:
        f.write("# file\tphrase its error message must contain\n")
        for name, phrase in expected:
            f.write("%s\t%s\n" % (name, phrase))


if __name__ == "__main__":
    main()
