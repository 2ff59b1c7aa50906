#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_capi (tests/cpp/fuzz/corpus/): small programs of C API calls.

An input of fuzz_capi is one header byte (bit 0: the simulated runtime runs queued work at once;
the rest seeds the order of kernel threads) and then operations [number][length][arguments].
The encoders below follow the order in which fuzz_capi.cpp reads each operation's arguments (a
zero byte always picks the ordinary case); if that order changes, these seeds still run but mean
something else: regenerate them (python3 tests/cpp/fuzz/make_seeds.py tests/cpp/fuzz/corpus).
Scenarios without an encoder use fixed pseudo-random argument bytes.

Usage: make_seeds.py OUTPUT_DIR
"""
import os
import random
import sys

# Operation numbers (the switch in run() of fuzz_capi.cpp).
CREATE, WRAP_HOST, WRAP_DEVICE, WRAP_SIDE, SLICE, TRANSPOSE, DOMAIN_VIEW, COPY = range(8)
COPY_SIDES, COPY_FROM_ARRAY, READ, FILL, SYNC_TO, SYNC_TO_ASYNC, MODIFY, SYNC_MISC = range(8, 16)
WAIT_STREAM, SET_STREAM, POOL, DLPACK_IMPORT, DLPACK_EXPORT, EXPORT_IMPORT = range(16, 22)
EXPORT_DELETE, RELEASE, RETAIN, QUERY, STREAM, SET_DEVICE, INJECT, DEVICE_SYNC = range(22, 30)
STALE, PLAN, STATS = range(30, 33)

# Tables of fuzz_capi.cpp, as indices.
EXTENT = {e: e for e in range(8)} | {8: 13, 16: 14, 33: 15}  # small_extents
DTYPE = {"<f8": 0, "<f4": 1, "<f2": 2, "|i1": 3, "<i2": 4, "<i4": 5, "<i8": 6, "|u1": 7,
         "<u2": 8, "<u4": 9, "<u8": 10, "|b1": 11, "<c8": 12, "<c16": 13}
DIMS = {None: 0, "IJK": 2, "KJI": 3, "IJ": 4, "I": 5, "K": 6, "IJK0": 7}
PRESET = {None: 0, "numpy": 1, "gt:cpu_kfirst": 3, "gt:cpu_ifirst": 4, "gt:gpu": 5,
          "dace:gpu": 7, "gridtools:gpu": 9, "C": 12, "F": 13, "fuzz:cpu_odd": 15,
          "fuzz:gpu_bytes": 16}
UNINIT, ZEROS, ONES, VALUE = range(4)
DEVICE_DEFAULT, DEVICE_CPU, DEVICE_GPU = 0, 1, 2  # the devices table: indices 0, 1, 2
MANAGED_DEFAULT, MANAGED_NONE, MANAGED_MIRROR, MANAGED_UNIFIED = range(4)
HOST, DEV = 0, 1
ASYNC = 1


def op(number, args):
    args = bytes(args)
    assert len(args) < 256
    return bytes([number, len(args)]) + args


def create(shape, dtype="<f8", dims=None, preset=None, halo=None, init=ZEROS, device=0,
           device_id=-1, managed=MANAGED_DEFAULT, pinned=False, readonly=False, pool_off=False,
           pitch=False, value=0):
    n = len(shape)
    a = [0, n]  # not the bad ndim; ndim
    a += [EXTENT[e] for e in shape]
    if n == 1:
        a += [0]  # not the long extent
    if n > 0:
        a += [0]  # no bad extent
    a += [0, DTYPE[dtype], DIMS[dims], PRESET[preset], 0]  # shape given; no layout map
    if halo:
        a += [1]
        for w in halo:  # 2 * n widths, 0 ... 2
            a += [0, w] if w else [1]
        a += [0]
    else:
        a += [0]
    a += [0, 0]  # no aligned index; the preset's alignment
    a += [0, init, device, {-1: 0, 0: 3, 1: 4}[device_id], 0, managed]
    a += [5 if pinned else 0, 0, 5 if readonly else 0, 3 if pool_off else 0, 0]
    a += [2 if pitch else 0, 0, 0, value]
    if init == VALUE:
        a += [0]  # a fill value is given
    return op(CREATE, a)


def fill(slot, value, typed=False):
    return op(FILL, [slot, value, 4 if typed else 0])


def read(slot):
    return op(READ, [slot, 0])


def release(slot):
    return op(RELEASE, [slot])


def copy(dst, src):
    return op(COPY, [dst, src])


def stream_arg(s):
    """0, 1, 2: the storage's, legacy, per-thread; ('mine', k): the target's stream k."""
    return s if isinstance(s, int) else 4 + s[1]


def copy_sides(dst, dst_side, src, src_side, stream=0, flags=0):
    return op(COPY_SIDES, [dst, src, 0, dst_side, src_side, stream_arg(stream), flags, 0])


def sync_to(slot, side, force=False, stream=0, asynchronous=False):
    return op(SYNC_TO_ASYNC if asynchronous else SYNC_TO,
              [slot, 0, side, 0, 2 if force else 0, stream_arg(stream)])


def modify(slot, side, force=False):
    return op(MODIFY, [slot, 0, side, 0, 2 if force else 0])


def make_stream(k, device=0, non_blocking=False):
    return op(STREAM, [k, 0, device, 1 if non_blocking else 0])


def set_stream(slot, s):
    return op(SET_STREAM, [slot, stream_arg(s)])


def wait_stream(slot, s=0):
    return op(WAIT_STREAM, [slot, stream_arg(s)])


def export(slot, side=HOST, versioned=True):
    return op(DLPACK_EXPORT, [slot, 1 if versioned else 0, 0, side])


def import_export(k=0):
    return op(EXPORT_IMPORT, [k, 0])


def domain_view(slot):
    return op(DOMAIN_VIEW, [slot])


def pool(what, memory, size_index):
    return op(POOL, [what, memory, size_index])


def set_device(index):  # 0 -> device 0, 1 -> device 1
    return op(SET_DEVICE, [index])


def raw(number, rng, length):
    return op(number, [rng.randrange(256) for _ in range(length)])


def program(*ops, eager=False, seed=0):
    return bytes([(seed << 1) | int(eager)]) + b"".join(ops)


def scenarios():
    gpu3 = dict(shape=(3, 4, 5), preset="gt:gpu", dims="IJK")
    s = {}
    # F6 of issue 23: an asynchronous device-to-host copy_sides, then the release of its
    # destination and a new storage that takes the pooled block.
    s["f6_async_copy_sides_release"] = program(
        create(**gpu3, managed=MANAGED_MIRROR), fill(0, 7), sync_to(0, DEV),
        copy_sides(0, HOST, 0, DEV, 0, ASYNC), release(0), create(**gpu3, managed=MANAGED_MIRROR),
        read(0))
    s["f6_pinned"] = program(
        create(**gpu3, managed=MANAGED_MIRROR, pinned=True), fill(0, 9), sync_to(0, DEV),
        copy_sides(0, HOST, 0, DEV, 0, ASYNC), release(0), create(**gpu3, pinned=True), read(0))
    s["f6_host_to_device_source_released"] = program(
        create(**gpu3, managed=MANAGED_NONE), create((3, 4, 5), init=VALUE, value=11),
        copy_sides(0, DEV, 1, HOST, 0, ASYNC), release(1), read(0))
    s["sync_to_async_then_release"] = program(
        create(**gpu3, managed=MANAGED_MIRROR), fill(0, 3), sync_to(0, DEV, asynchronous=True),
        release(0), create(**gpu3, managed=MANAGED_MIRROR), read(0))
    s["host_pool_reuse_zeros"] = program(
        create((16, 16, 8)), fill(0, 5), release(0), create((16, 16, 8)), read(0),
        pool(2, 0, 0))
    s["pool_limits"] = program(
        pool(0, 3, 2), create((33, 33)), create((8, 8), preset="gt:gpu"), release(0), release(0),
        pool(1, 3, 0), pool(2, 2, 0), pool(0, 3, 0))
    s["mirror_round_trip"] = program(
        create(**gpu3, managed=MANAGED_MIRROR, halo=(1, 1, 1, 1, 0, 0)), fill(0, 4),
        sync_to(0, DEV), modify(0, DEV), sync_to(0, HOST), read(0), domain_view(0), fill(1, 6),
        read(0), read(1))
    s["device_only_and_copy"] = program(
        create(**gpu3, managed=MANAGED_NONE, init=VALUE, value=21), create((3, 4, 5), dims="IJK"),
        copy(1, 0), read(1), copy_sides(0, DEV, 1, HOST), read(0))
    s["unified"] = program(
        create(**gpu3, managed=MANAGED_UNIFIED), fill(0, 8), sync_to(0, DEV), sync_to(0, HOST),
        read(0), copy_sides(0, DEV, 0, HOST, 1, ASYNC), read(0))
    s["streams"] = program(
        make_stream(0, 0, True), make_stream(1, 1), create(**gpu3, managed=MANAGED_MIRROR),
        set_stream(0, ("mine", 0)), fill(0, 2), sync_to(0, DEV, stream=("mine", 0),
                                                         asynchronous=True),
        copy_sides(0, HOST, 0, DEV, ("mine", 1), ASYNC), wait_stream(0, ("mine", 1)), read(0),
        set_stream(0, 2), release(0))
    s["two_devices"] = program(
        set_device(1), create(**gpu3, managed=MANAGED_NONE, init=ONES), set_device(0),
        create(**gpu3, managed=MANAGED_NONE, device_id=0), copy(1, 0), read(1))
    s["dlpack_round_trip"] = program(
        create((4, 5), dtype="<i4", init=VALUE, value=13), export(0, HOST, True),
        export(0, HOST, False), import_export(0), read(1), op(EXPORT_DELETE, [0]), release(0),
        read(0))
    s["dlpack_device_round_trip"] = program(
        create(**gpu3, managed=MANAGED_MIRROR, init=VALUE, value=17), sync_to(0, DEV),
        export(0, DEV, True), import_export(0), read(1), release(0), read(0))
    s["dtypes"] = program(
        create((5, 3), dtype="|b1", init=ONES), create((5, 3), dtype="<f2"),
        create((5, 3), dtype="<c16", preset="gt:gpu", dims="IJ"), fill(1, 3), copy(2, 1),
        copy(0, 2), read(0), read(2), fill(0, 0, typed=True), copy(1, 0), read(1))
    s["pitch_padding_and_odd_alignment"] = program(
        create((33, 16, 8), pitch=True, preset="fuzz:cpu_odd", init=VALUE, value=1),
        create((33, 16, 8), preset="fuzz:gpu_bytes", managed=MANAGED_MIRROR), copy(1, 0),
        read(1))
    s["readonly"] = program(
        create((4, 4), init=ONES, readonly=True), fill(0, 3), read(0), copy(0, 0))
    s["scalar_and_empty"] = program(
        create(()), create((0, 3)), create((0, 3), preset="gt:gpu", dims="IJ"), fill(0, 4),
        fill(1, 4), copy(2, 1), read(0), read(2))
    s["long_host"] = program(create((33,)), op(CREATE, [0, 1, 1, 23]), read(0))
    s["eager_mirror"] = program(
        create(**gpu3, managed=MANAGED_MIRROR), fill(0, 7), sync_to(0, DEV, asynchronous=True),
        modify(0, DEV, True), read(0), eager=True, seed=5)
    # The known bugs whose checks are switched off by default (fuzz_capi.cpp, "Known bugs"):
    # with the switch on, each of these fails while the bug is there.
    s["f1_empty_wrap_with_null_data"] = program(  # a wrap of shape (0,) with data = NULL
        op(WRAP_HOST, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0]), op(QUERY, [0, 0, 0, 0]))
    s["f3_dlpack_tensor_past_its_memory"] = program(  # 5 <f8 over 20 bytes of device memory
        op(DLPACK_IMPORT, [0, 1, 5, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3] + [0] * 9), fill(0, 3), read(0))
    s["f8_set_stream_destroyed"] = program(
        make_stream(0), op(STREAM, [0, 2, 0, 0]), create(**gpu3, managed=MANAGED_MIRROR),
        set_stream(0, ("mine", 0)), fill(0, 3), read(0))
    rng = random.Random(20260501)
    # Operations whose arguments have no encoder here: fixed pseudo-random bytes.
    for name, numbers in [
        ("wraps", [WRAP_HOST, WRAP_DEVICE, WRAP_HOST, READ, FILL, READ, WRAP_SIDE, RELEASE]),
        ("dlpack_imports", [DLPACK_IMPORT, DLPACK_IMPORT, READ, COPY, READ, RELEASE, QUERY]),
        ("views", [CREATE, SLICE, TRANSPOSE, DOMAIN_VIEW, FILL, READ, QUERY, RETAIN, RELEASE]),
        ("misc", [SYNC_MISC, STALE, PLAN, STATS, COPY_FROM_ARRAY, QUERY, DEVICE_SYNC]),
        ("inject", [CREATE, INJECT, CREATE, COPY, SYNC_TO, READ, RELEASE]),
    ]:
        for k in range(3):
            s[f"{name}_{k}"] = program(
                create(**gpu3, managed=MANAGED_MIRROR, init=VALUE, value=5),
                create((3, 4, 5), init=ONES),
                *[raw(n, rng, rng.randrange(8, 64)) for n in numbers], seed=k)
    return s


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in scenarios().items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{len(scenarios())} seeds in {out}")


if __name__ == "__main__":
    main()
