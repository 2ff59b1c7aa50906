#!/usr/bin/env python3
"""Writes test_types.f90: one test routine per (element type, rank) of the Fortran binding.

The binding's generics have one assumed-rank specific per element type (table FORTRAN_TYPES of
tools/gen_bindings.py). This test is generated from the same table and runs every type at ranks
0 (a scalar), 1, 3 and the highest rank (GTSTORAGE_MAX_NDIM capped at Fortran's 15) through
gtstorage_get_pointer, gtstorage_wrap, gtstorage_copy_from_array and gtstorage_copy_to_array,
checking bounds and every value (C reads what Fortran wrote). A failure
case per generic checks the status and that pointers are left disassociated: a wrong type, a
wrong rank and a released handle for gtstorage_get_pointer (each pointer associated before the
call), a bad halo for gtstorage_wrap (null handle, no pointer to it), an array of another rank
for both copies (arrays and storage unchanged).

Usage: gen_test_types.py OUTPUT.f90
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import gen_bindings  # noqa: E402  (the binding's generator: its type table and the header)


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


def geometry(rank, max_rank):
    """Extents (halo included) and symmetric halo widths of the test storage of a rank."""
    if rank == max_rank and rank > 3:
        # Small in total (288 elements at rank 15), with a halo in the first and last dims.
        extents = [4, 3, 2, 2] + [1] * (rank - 6) + [2, 3]
        widths = [1, 1] + [0] * (rank - 3) + [1]
        return extents, widths
    return [6, 5, 4][:rank], [2, 1, 1][:rank]


def dim(spec):
    """The dimension attribute of an array spec ("" for a scalar)."""
    return f", dimension{spec}" if spec else ""


def routine(index, tag, ftype, typestr, rank, max_rank):
    types = gen_bindings.FORTRAN_TYPES
    o_tag, o_ftype = types[(index + 1) % len(types)][:2]
    wrong_rank = rank % max_rank + 1
    spec = "(" + ",".join([":"] * rank) + ")" if rank else ""
    wrong_spec = "(" + ",".join([":"] * wrong_rank) + ")"
    ones = "(" + ", ".join(["1"] * rank) + ")" if rank else ""
    wrong_ones = "(" + ", ".join(["2"] * wrong_rank) + ")"
    extents, widths = geometry(rank, max_rank)
    val, re, im = value_expr(tag, "n")
    val2, _, _ = value_expr(tag, "n + 5")

    def elem(name):
        """name(ix(1), …, ix(rank)), continued every 6 subscripts (132-column lines)."""
        if not rank:
            return name
        subs = [f"ix({d})" for d in range(1, rank + 1)]
        rows = [", ".join(subs[i:i + 6]) for i in range(0, rank, 6)]
        return name + "(" + ", &\n          ".join(rows) + ")"

    def all_eq(a, b):
        test = f"({a} .eqv. {b})" if tag == "logical" else f"({a} == {b})"
        return f"all({test})" if rank else test

    def each(body, array="p"):
        """Runs body (lines) for every element of array, n = 0, 1, … (first index fastest)."""
        if rank == 0:
            return "    n = 0\n" + "".join(f"    {line}\n" for line in body)
        lines = "".join(f"      {line}\n" for line in body)
        return (f"    n = 0\n    ix = lbound({array})\n    do\n{lines}"
                f"      n = n + 1\n"
                f"      if (.not. next_index(ix, lbound({array}), ubound({array}))) exit\n"
                f"    end do\n")

    if rank:
        decl_geom = (f"    integer, parameter :: shp({rank}) = [{', '.join(map(str, extents))}]\n"
                     f"    integer, parameter :: hal({rank}) = [{', '.join(map(str, widths))}]\n"
                     f"    integer :: ix({rank})\n")
        halo_arg = ", halo=hal"
        alloc = "a(" + ", &\n              ".join(f"1 - hal({d}):shp({d}) - hal({d})"
                                               for d in range(1, rank + 1)) + ")"
        bounds = f"""    call check(all(lbound(p) == 1 - hal), what//": lbound")
    call check(all(ubound(p) == shp - hal), what//": ubound")
"""
        wrapped_bounds = """        call check(all(lbound(q) == lbound(a)) .and. all(ubound(q) == ubound(a)), &
                   what//": wrapped bounds")
"""
        set_first = "        ix = lbound(a)\n"
        set_last = "        ix = ubound(a)\n"
        shape_arg = "shp"
        ix_args = "ix, lbound(p)"
    else:
        decl_geom = "    integer :: ix(0)\n"
        halo_arg = ""
        alloc = "a"
        bounds = wrapped_bounds = ""
        set_first = set_last = ""
        shape_arg = "[integer ::]"
        ix_args = "ix, ix"

    return f"""
  !> {ftype}, rank {rank}
  subroutine t_{tag}_{rank}()
    character(*), parameter :: what = "{tag} rank {rank}"
{decl_geom}    {ftype}, pointer{dim(spec)} :: p, q, keep
    {o_ftype}, pointer{dim(spec)} :: wrong_kind, keep_kind
    {ftype}, pointer{dim(wrong_spec)} :: wrong_rank, keep_rank
    {ftype}, allocatable, target{dim(spec)} :: a
    {ftype} :: other{wrong_ones}
    integer(gtstorage_handle_kind) :: s, w, w2
    integer :: st, n, bad
    real(c_double) :: cre, cim
    logical :: same

    ! Defined before the first call: passing an undefined pointer to the assumed-rank dummy is
    ! valid, but gfortran 12 copies its descriptor and warns (-Wmaybe-uninitialized) about that.
    nullify (p, q)
    call gtstorage_create(s, {shape_arg}, preset="gt:cpu_kfirst"{halo_arg}, &
                          dtype="{typestr}", init=GTSTORAGE_INIT_ZEROS, status=st)
    call check_status(st, GTSTORAGE_OK, what//": create")
    if (st /= GTSTORAGE_OK) return

    ! A pointer of another type or rank is refused with a status and left disassociated, even
    ! when it was associated before the call.
    allocate (wrong_kind{ones}, wrong_rank{wrong_ones})
    keep_kind => wrong_kind
    keep_rank => wrong_rank
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
    deallocate (keep_kind, keep_rank)

    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_OK, what//": get_pointer")
    if (.not. associated(p)) return
{bounds}
    ! Fortran writes, C reads with its own addressing.
{each([f"{elem('p')} = {val}"])}    bad = 0
{each(["cre = read_c(s, " + ix_args + ", cim)",
       f"if (cre /= {re} .or. cim /= {im}) bad = bad + 1"])}    call check(bad == 0, what//": C reads what Fortran wrote")

    ! Copies to and from a Fortran array of the storage's shape.
    allocate ({alloc})
    call gtstorage_copy_to_array(a, s, st)
    call check_status(st, GTSTORAGE_OK, what//": copy_to_array")
    call check(logical({all_eq("a", "p")}), what//": copy_to_array values")
{each([f"{elem('a')} = {val2}"], "a")}    call gtstorage_copy_from_array(s, a, st)
    call check_status(st, GTSTORAGE_OK, what//": copy_from_array")
    call check(logical({all_eq("a", "p")}), what//": copy_from_array values")

    ! Copies with an array of another rank fail with a status and change nothing.
    other = {val2.replace("n + 5", "7")}
    call gtstorage_copy_from_array(s, other, st)
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               what//": copy_from_array of rank {wrong_rank}: "//gtstorage_status_name(st))
    call check(logical({all_eq("a", "p")}), what//": failed copy_from_array keeps the storage")
    call gtstorage_copy_to_array(other, s, st)
    call check(st == GTSTORAGE_ERROR_SHAPE_MISMATCH .or. st == GTSTORAGE_ERROR_INVALID_ARGUMENT, &
               what//": copy_to_array of rank {wrong_rank}: "//gtstorage_status_name(st))
    call check(logical(all(other {"== " if tag != "logical" else ".eqv. "}{val2.replace("n + 5", "7")})), &
               what//": failed copy_to_array keeps the array")

    ! Wrapping the Fortran array: a storage over the same memory, same bounds through the halo.
    call gtstorage_wrap(w, a{halo_arg}, status=st)
    call check_status(st, GTSTORAGE_OK, what//": wrap")
    if (st == GTSTORAGE_OK) then
      call gtstorage_get_pointer(w, q, st)
      call check_status(st, GTSTORAGE_OK, what//": get_pointer of the wrapped array")
      if (associated(q)) then
{wrapped_bounds}{set_first}        same = c_associated(c_loc({elem("q")}), c_loc({elem("a")}))
{set_last}        same = same .and. c_associated(c_loc({elem("q")}), c_loc({elem("a")}))
        call check(same, what//": same memory")
        call check(logical({all_eq("q", "a")}), what//": same values")
      end if
      ! A failed wrap gives a null handle, and a pointer to it stays disassociated.
      call gtstorage_wrap(w2, a, halo=spread(1, 1, {2 * rank + 1}), status=st)
      call check_status(st, GTSTORAGE_ERROR_INVALID_ARGUMENT, what//": wrap with a bad halo")
      call check(w2 == GTSTORAGE_NULL_HANDLE, what//": failed wrap gives a null handle")
      call gtstorage_get_pointer(w2, q, st)
      call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, what//": pointer to a failed wrap")
      call check(.not. associated(q), what//": pointer to a failed wrap is null")
      call gtstorage_release(w, st)
      call check_status(st, GTSTORAGE_OK, what//": release wrapped")
    end if

    ! A released storage gives no pointer: the pointer, associated before, is disassociated.
    keep => p
    call gtstorage_release(s, st)
    call check_status(st, GTSTORAGE_OK, what//": release")
    call gtstorage_get_pointer(s, p, st)
    call check_status(st, GTSTORAGE_ERROR_INVALID_HANDLE, what//": pointer to a released storage")
    call check(.not. associated(p), what//": pointer to a released storage is null")
    call check(associated(keep), what//": only the pointer argument changes")
  end subroutine t_{tag}_{rank}
"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    header = os.path.join(gen_bindings.ROOT, gen_bindings.HEADER_REL)
    max_rank = gen_bindings.fortran_max_rank(gen_bindings.parse_header(header))
    ranks = sorted({0, 1, 3, max_rank})
    calls, bodies = [], []
    for index, (tag, ftype, typestr, _) in enumerate(gen_bindings.FORTRAN_TYPES):
        for rank in ranks:
            calls.append(f"  call t_{tag}_{rank}()\n")
            bodies.append(routine(index, tag, ftype, typestr, rank, max_rank))
    text = f"""! Generated by tests/fortran/gen_test_types.py; do not edit.
!> Every element type of the Fortran binding's generics at ranks {", ".join(map(str, ranks))},
!> see gen_test_types.py.
program test_types
  use, intrinsic :: iso_c_binding
  use gtstorage
  use gts_testing
  implicit none
  integer(c_int64_t) :: live0

  live0 = live_handles()
{"".join(calls)}  call check(live_handles() == live0, "every storage released")
  call report("test_types")

contains

  !> Advances the index ix within lb:ub, first dimension fastest; .false. after the last one.
  logical function next_index(ix, lb, ub) result(more)
    integer, intent(inout) :: ix(:)
    integer, intent(in) :: lb(:), ub(:)
    integer :: d
    more = .true.
    do d = 1, size(ix)
      if (ix(d) < ub(d)) then
        ix(d) = ix(d) + 1
        return
      end if
      ix(d) = lb(d)
    end do
    more = .false.
  end function next_index
{"".join(bodies)}
end program test_types
"""
    with open(sys.argv[1], "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


if __name__ == "__main__":
    sys.exit(main())
