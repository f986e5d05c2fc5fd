#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# mpi4py-check.py - a Python MPI program for t/0111-mpi.py, knowing nothing
# of Canary: with libcanarympi.so preloaded, mpi4py's Allreduce goes
# through it. Every rank's inputs are a function of (rank, size, i), so each
# rank computes the exact sums itself: int32 sums (modulo 2^32) must match
# exactly; float sums (CANARY_MPI_FLOAT=1) within libcanarympi's bound,
#   |result - exact| <= P x 2^(e + k - 31) + half an ulp of the result,
# e the exponent of the largest magnitude of the 256-element block over all
# ranks, k = ceil(log2 P). Then calls that fall through (MAX, double, a
# communicator of half the ranks: mpi4py runs under MPI_THREAD_MULTIPLE,
# where only MPI_COMM_WORLD itself is served). Rank 0 prints what it expects
# the report to count. Exit 0 if every result matched, 1 otherwise.
import array
import math
import struct
import sys

from mpi4py import MPI

BLOCK = 256
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
bad = []


def mix(x):
    x &= (1 << 64) - 1
    x ^= x >> 33
    x = (x * 0xff51afd7ed558ccd) & ((1 << 64) - 1)
    x ^= x >> 33
    x = (x * 0xc4ceb9fe1a85ec53) & ((1 << 64) - 1)
    return x ^ (x >> 33)


def in_int(r, n, i):
    v = mix((r << 40) ^ (n << 20) ^ i) & 0xffffffff
    return v - (1 << 32) if v >= 1 << 31 else v


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def in_float(r, n, i):
    g = mix(n * 131 + i // BLOCK)
    if g % 13 == 0:
        return 0.0
    return f32(math.ldexp((mix(((r + 77) << 40) ^ (n << 20) ^ i) >> 11) / 9007199254740992.0 - 0.5,
                          g % 41 - 20))


def check_int(n):
    src = array.array("i", (in_int(rank, n, i) for i in range(n)))
    dst = array.array("i", bytes(4 * n))
    comm.Allreduce([src, MPI.INT], [dst, MPI.INT], op=MPI.SUM)
    for i in range(n):
        want = sum(in_int(r, n, i) for r in range(size)) & 0xffffffff
        want = want - (1 << 32) if want >= 1 << 31 else want
        if dst[i] != want:
            bad.append("int32 sum, %d elements: element %d is %d, not %d" % (n, i, dst[i], want))
            return


def check_float(n):
    k = max(0, (size - 1).bit_length())
    src = array.array("f", (in_float(rank, n, i) for i in range(n)))
    dst = array.array("f", bytes(4 * n))
    comm.Allreduce([src, MPI.FLOAT], [dst, MPI.FLOAT], op=MPI.SUM)
    for b in range(0, n, BLOCK):
        idx = range(b, min(n, b + BLOCK))
        m = max(abs(in_float(r, n, i)) for r in range(size) for i in idx)
        e = math.frexp(m)[1] if m > 0 else 0
        for i in idx:
            exact = math.fsum(in_float(r, n, i) for r in range(size))
            got = dst[i]
            ulp = math.ldexp(1, math.frexp(got)[1] - 24) if got else 0     # a float's: 24-bit significand
            bound = size * math.ldexp(1, e + k - 31) + 0.5 * ulp if m else 0
            if not abs(got - exact) <= bound:
                bad.append("float sum, %d elements: element %d is %r, not %r (bound %g)" % (n, i, got, exact, bound))
                return


def fallthrough():
    src = array.array("i", (in_int(rank, 64, i) for i in range(64)))
    dst = array.array("i", bytes(256))
    comm.Allreduce([src, MPI.INT], [dst, MPI.INT], op=MPI.MAX)
    for i in range(64):
        if dst[i] != max(in_int(r, 64, i) for r in range(size)):
            bad.append("int max (fell through): element %d" % i)
            break
    d = array.array("d", (float(i * (rank + 1)) for i in range(64)))
    dd = array.array("d", bytes(8 * 64))
    comm.Allreduce([d, MPI.DOUBLE], [dd, MPI.DOUBLE], op=MPI.SUM)
    if list(dd) != [float(i * size * (size + 1) // 2) for i in range(64)]:
        bad.append("double sum (fell through)")
    dup = comm.Dup()
    dup.Allreduce([src, MPI.INT], [dst, MPI.INT], op=MPI.SUM)
    want = [((sum(in_int(r, 64, i) for r in range(size)) + (1 << 31)) & 0xffffffff) - (1 << 31) for i in range(64)]
    if list(dst) != want:
        bad.append("int sum on a duplicate of COMM_WORLD (fell through)")
    dup.Free()
    return 1, 1, 1    # op, datatype, comm


floats = "--float" in sys.argv
sizes = [16, 300, 4096, 20000]
for n in sizes:
    check_int(n)
    if floats:
        check_float(n)
op, dtype, comms = fallthrough()
if rank == 0:
    print("expect int32 %d float %d op %d datatype %d comm %d small 0 nonfinite 0" %
          (len(sizes), len(sizes) if floats else 0, op, dtype, comms), flush=True)
for b in bad:
    print("mpi4py-check: rank %d: %s" % (rank, b), file=sys.stderr)
sys.exit(1 if bad else 0)
