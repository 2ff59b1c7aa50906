#!/usr/bin/env python3
"""Writes test_types.f90: one test routine per (element type, rank) of the Fortran binding.

The binding's generics have a specific procedure per type and rank (bindings/fortran/generate.py);
a hand-written test would cover a few of them. This test is generated from the same type table,
so every specific of gtstorage_get_pointer, gtstorage_wrap, gtstorage_copy_from_array and
gtstorage_copy_to_array runs, and every wrong-type and wrong-rank request is checked to fail
with a status and a disassociated pointer.

Usage: gen_test_types.py OUTPUT.f90
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bindings", "fortran"))
import generate  # noqa: E402  (the binding's generator: its TYPES table and max rank)


def value_expr(tag, n):
    """Fortran expression of the test value number n (an integer expression) for a type, and
    the (re, im) doubles C should read for it. Values stay small so int8 holds them."""
    if tag.startswith("real"):
        kind = "c_float" if tag == "real32" else "c_double"
        return (f"real(mod({n}, 97) - 40, {kind}) + 0.5_{kind}",
                f"real(mod({n}, 97) - 40, c_double) + 0.5_c_double", "0.0_c_double")
    if tag.startswith("int"):
        kind = {"int8": "c_int8_t", "int16": "c_int16_t", "int32": "c_int32_t",
                "int64": "c_int64_t"}[tag]
        return (f"int(mod({n}, 97) - 40, {kind})", f"real(mod({n}, 97) - 40, c_double)",
                "0.0_c_double")
    if tag == "logical":
        return (f"logical(mod({n}, 3) == 1, c_bool)",
                f"merge(1.0_c_double, 0.0_c_double, mod({n}, 3) == 1)", "0.0_c_double")
    kind = "c_float" if tag == "complex64" else "c_double"
    return (f"cmplx(mod({n}, 97) - 40, -mod({n}, 13), {kind})",
            f"real(mod({n}, 97) - 40, c_double)", f"real(-mod({n}, 13), c_double)")


def eq(tag, a, b):
    return f"({a} .eqv. {b})" if tag == "logical" else f"({a} == {b})"


def other_type(index):
    """A different type than TYPES[index] for the wrong-kind check."""
    return generate.TYPES[(index + 1) % len(generate.TYPES)]


def routine(index, tag, ftype, typestr, rank, max_rank):
    spec = "(" + ",".join([":"] * rank) + ")"
    idx = [f"i{d}" for d in range(1, rank + 1)]
    wrong_rank = rank % max_rank + 1
    wrong_spec = "(" + ",".join([":"] * wrong_rank) + ")"
    o_tag, o_ftype = other_type(index)[0], other_type(index)[1]
    val, re, im = value_expr(tag, "n")
    val2, _, _ = value_expr(tag, "n + 5")
    loops_open = "".join(f"{'  ' * (rank - d)}    do i{d} = lbound(p, {d}), ubound(p, {d})\n"
                         for d in range(rank, 0, -1))
    loops_close = "".join(f"{'  ' * (d - 1)}    end do\n" for d in range(rank, 0, -1))
    ind = "  " * rank + "    "
    full = f"shp(1:{rank})"
    hal = f"hal(1:{rank})"
    first_q = ", ".join(f"lbound(q, {d})" for d in range(1, rank + 1))
    last_q = ", ".join(f"ubound(q, {d})" for d in range(1, rank + 1))
    first_a = first_q.replace("q,", "a,")
    last_a = last_q.replace("q,", "a,")
    alloc = ", &\n                ".join(f"1 - hal({d}):shp({d}) - hal({d})"
                                        for d in range(1, rank + 1))
    return f"""
  !> {ftype}, rank {rank}
  subroutine t_{tag}_{rank}()
    character(*), parameter :: what = "{tag} rank {rank}"
    {ftype}, pointer :: p{spec}, q{spec}
    {o_ftype}, pointer :: wrong_kind{spec}
    {ftype}, pointer :: wrong_rank{wrong_spec}
    {ftype}, allocatable, target :: a{spec}
    integer(gtstorage_handle_kind) :: s, w
    integer :: st, n, bad, lb({rank}), {", ".join(idx)}
    real(c_double) :: cre, cim
    type(c_ptr) :: first_q, first_a, last_q, last_a

    call gtstorage_create(s, {full}, preset="gt:cpu_kfirst", halo={hal}, &
                          dtype="{typestr}", init=GTSTORAGE_INIT_ZEROS, status=st)
    call check_status(st, GTSTORAGE_OK, what//": create")
    if (st /= GTSTORAGE_OK) return

    ! A pointer of another type or rank is refused with a status, never associated.
    call gtstorage_get_pointer(s, wrong_kind, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, what//": pointer of type {o_tag}")
    call check(.not. associated(wrong_kind), what//": wrong type leaves the pointer null")
    call check_contains(gtstorage_last_error(), "{typestr}", what//": message names the dtype")
    call gtstorage_get_pointer(s, wrong_rank, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, &
                      what//": pointer of rank {wrong_rank}")
    call check(.not. associated(wrong_rank), what//": wrong rank leaves the pointer null")
    call check_contains(gtstorage_last_error(), "rank {wrong_rank}", &
                        what//": message names the rank")

    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_OK, what//": get_pointer")
    if (.not. associated(p)) return
    lb = lbound(p)
    call check(all(lb == 1 - {hal}), what//": lbound")
    call check(all(ubound(p) == {full} - {hal}), what//": ubound")

    ! Fortran writes, C reads with its own addressing.
    n = 0
{loops_open}{ind}p({", ".join(idx)}) = {val}
{ind}n = n + 1
{loops_close}    n = 0
    bad = 0
{loops_open}{ind}cre = read_c(s, [{", ".join(idx)}], lb, cim)
{ind}if (cre /= {re} .or. &
{ind}    cim /= {im}) bad = bad + 1
{ind}n = n + 1
{loops_close}    call check(bad == 0, what//": C reads what Fortran wrote")

    ! Copies to and from a Fortran array of the storage's shape.
    allocate (a({alloc}))
    call gtstorage_copy_to_array(a, s, st)
    call check_status(st, GTSTORAGE_OK, what//": copy_to_array")
    call check(logical(all({eq(tag, "a", "p")})), what//": copy_to_array values")
    n = 0
{loops_open}{ind}a({", ".join(idx)}) = {val2}
{ind}n = n + 1
{loops_close}    call gtstorage_copy_from_array(s, a, st)
    call check_status(st, GTSTORAGE_OK, what//": copy_from_array")
    call check(logical(all({eq(tag, "a", "p")})), what//": copy_from_array values")

    ! Wrapping the Fortran array: a storage over the same memory, same bounds through the halo.
    call gtstorage_wrap(w, a, halo={hal}, status=st)
    call check_status(st, GTSTORAGE_OK, what//": wrap")
    if (st == GTSTORAGE_OK) then
      call gtstorage_get_pointer(w, q, st)
      call check_status(st, GTSTORAGE_OK, what//": get_pointer of the wrapped array")
      if (associated(q)) then
        call check(all(lbound(q) == lbound(a)) .and. all(ubound(q) == ubound(a)), &
                   what//": wrapped bounds")
        first_q = c_loc(q({first_q}))
        first_a = c_loc(a({first_a}))
        last_q = c_loc(q({last_q}))
        last_a = c_loc(a({last_a}))
        call check(c_associated(first_q, first_a) .and. c_associated(last_q, last_a), &
                   what//": same memory")
        call check(logical(all({eq(tag, "q", "a")})), what//": same values")
      end if
      call gtstorage_release(w, st)
      call check_status(st, GTSTORAGE_OK, what//": release wrapped")
    end if
    call gtstorage_release(s, st)
    call check_status(st, GTSTORAGE_OK, what//": release")
  end subroutine t_{tag}_{rank}
"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    max_rank = generate.read_max_rank(
        os.path.join(HERE, "..", "..", "bindings", "fortran", "gtstorage_gen_interfaces.inc"))
    max_rank = max_rank or generate.DEFAULT_MAX_RANK
    # Extents and symmetric halo widths per dimension (extent > 2 * halo).
    extents = ([6, 5, 4, 3] + [2] * 11)[:max_rank]
    widths = ([2, 1, 1, 0] + [0] * 11)[:max_rank]
    calls, bodies = [], []
    for index, (tag, ftype, typestr, _, _) in enumerate(generate.TYPES):
        for rank in range(1, max_rank + 1):
            calls.append(f"  call t_{tag}_{rank}()\n")
            bodies.append(routine(index, tag, ftype, typestr, rank, max_rank))
    text = f"""! Generated by tests/fortran/gen_test_types.py; do not edit.
!> Every (element type, rank) specific of the Fortran binding's generics, see gen_test_types.py.
program test_types
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none
  integer, parameter :: shp({max_rank}) = [{", ".join(map(str, extents))}]
  integer, parameter :: hal({max_rank}) = [{", ".join(map(str, widths))}]
  integer(c_int64_t) :: live0

  live0 = live_handles()
{"".join(calls)}  call check(live_handles() == live0, "every storage released")
  call report("test_types")

contains
{"".join(bodies)}
end program test_types
"""
    with open(sys.argv[1], "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


if __name__ == "__main__":
    main()
