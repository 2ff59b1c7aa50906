! Fortran -> Python call-overhead benchmark driver (bridge-agnostic).
!
! Every call into Python goes through the procedures of module `bench_layer`
! (bridge_* names).  layer_py2fgen.F90 maps them onto icon4py's py2fgen; a
! layer for another bridge provides the same names (see README.md).
!
! Usage:  bench_driver OUT_FILE [SCALE [SCALE_DIFF]]
!   OUT_FILE    "key value" lines (turned into JSON by collect_results.py)
!   SCALE       optional factor on the number of calls per repeat (default 1.0;
!               e.g. 0.05 for a smoke test)
!   SCALE_DIFF  optional factor for the diffusion cases only (default SCALE);
!               run.sh uses it for a bridge whose empty calls are slow, so that
!               the diffusion cases keep their full number of calls
!
! All arrays are allocatables of the main program (host-associated in the
! internal procedures), so they are passed to the bridge exactly as written at
! the call site.  The *_via_assumed_shape cases deliberately pass them through
! one intermediate subroutine with a plain assumed-shape dummy, as in typical
! model code.
program bench_driver
   use, intrinsic :: iso_c_binding
   use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
   use bench_harness
   use bench_layer, only: layer_name, layer_ok, bridge_empty_1, bridge_empty_10, &
                          bridge_empty_40, bridge_diffusion, bridge_probe, bridge_fail
   implicit none

   real(c_double), allocatable, target :: a(:, :, :), b(:, :, :), c(:, :, :)
   real(c_double), allocatable, target :: fin(:, :, :), fout(:, :, :)
   real(c_double), allocatable :: before(:, :, :)
   type(arr3_t), allocatable, target :: arrs(:)
   integer(c_long), target :: info(8)
   integer(c_int) :: rc
   integer :: nerr
   real(real64) :: t_init
   logical :: cp_contig, cp_arrs, cp_section_j, cp_stride2, cp_lbound, cp_via_as
   integer(int64) :: t0, t1
   integer, parameter :: n_cases = 9
   ! the case's id is its index; the modes of time_case are the same numbers
   integer, parameter :: EMPTY_1 = 1, EMPTY_10 = 2, EMPTY_40 = 3, EMPTY_1_NOCACHE = 4, &
                         SECTION_J = 5, SECTION_STRIDE2 = 6, EMPTY_1_VIA_AS = 7, &
                         DIFFUSION = 8, DIFFUSION_VIA_AS = 9
   character(len=32), parameter :: case_names(n_cases) = [character(len=32) :: &
      "empty_1", "empty_10", "empty_40", "empty_1_nocache", "section_j", "section_stride2", &
      "empty_1_via_assumed_shape", "diffusion", "diffusion_via_assumed_shape"]
   real(real64) :: samples(n_cases, max(n_repeats_empty, n_repeats_diff))
   integer :: case_calls(n_cases), case_errors(n_cases), r, k

   call open_results("py2fgen_raw.txt", layer_name)
   call allocate_fields(a, b, c, arrs, fin, fout)

   ! ---- 1. first call: starts the embedded interpreter ----------------------------
   call system_clock(t0)
   call bridge_empty_1(a, rc)
   call system_clock(t1)
   t_init = elapsed_ms(t0, t1)
   write (u, '(a,1x,g0)') "first_call_ms", t_init
   write (u, '(a,1x,i0)') "first_call_rc", rc
   write (*, '(a,f10.1,a,i0)') "first call (interpreter start-up): ms=", t_init, " rc=", rc
   if (rc /= layer_ok) then
      write (error_unit, *) "first call failed, rc=", rc
      close (u)
      stop 2
   end if

   ! ---- 2. probes: address seen by Python vs Fortran, write-back, logicals --------
   ! (bench_functions.probe adds 1.0 to every element it sees)
   allocate (before, source=a)
   info = -1
   call bridge_probe(a, info, .true._c_bool, rc)
   call emit_whole_probe("contiguous", rc, info, a, before, cp_contig)

   info = -1
   call bridge_probe(a(:, 2:ey - 1, :), info, .true._c_bool, rc)
   cp_section_j = info(1) /= addr(c_loc(a(1, 2, 1)))
   call emit_probe("section_j", rc, info, addr(c_loc(a(1, 2, 1))), cp_section_j, &
                   section_j_written_back(a, before), shape(a(:, 2:ey - 1, :)))
   a = before

   info = -1
   call bridge_probe(a(::2, :, :), info, .true._c_bool, rc)
   cp_stride2 = info(1) /= addr(c_loc(a(1, 1, 1)))
   call emit_probe("section_stride2", rc, info, addr(c_loc(a(1, 1, 1))), cp_stride2, &
                   stride2_written_back(a, before), shape(a(::2, :, :)))
   a = before

   info = -1
   call via_assumed_shape_probe(a)
   call emit_whole_probe("via_assumed_shape", rc, info, a, before, cp_via_as)
   deallocate (before)

   allocate (before, source=arrs(1)%v)
   info = -1
   call bridge_probe(arrs(1)%v, info, .true._c_bool, rc)
   call emit_whole_probe("derived_type_component", rc, info, arrs(1)%v, before, cp_arrs)
   deallocate (before)

   allocate (before, source=fin)
   info = -1
   call bridge_probe(fin, info, .true._c_bool, rc)
   call emit_whole_probe("lbound_minus1", rc, info, fin, before, cp_lbound)
   write (u, '(a,3(1x,i0))') "probe.lbound_minus1.fortran_lbound", lbound(fin)
   deallocate (before)

   allocate (before, source=a)
   info = -1
   call bridge_probe(a, info, .false._c_bool, rc)
   write (u, '(a,1x,i0)') "probe.logical_false_seen_as", info(5)
   call probe_logical_ff()
   a = before
   deallocate (before)

   ! ---- 3. error handling: the Python function raises ---------------------------
   call bridge_fail(a, rc)
   write (u, '(a,1x,i0)') "error.rc_when_python_raises", rc
   call bridge_empty_1(a, rc)
   write (u, '(a,1x,i0)') "error.rc_next_call_after_exception", rc
   flush (u)

   ! ---- 4. timings (interleaved rounds) -------------------------------------------
   case_errors = 0
   call check_diffusion(DIFFUSION)
   call check_diffusion(DIFFUSION_VIA_AS)
   do r = 1, max(n_repeats_empty, n_repeats_diff)
      if (r <= n_repeats_empty) then
         do k = EMPTY_1, EMPTY_1_VIA_AS
            call time_case(k, n_empty, r)
         end do
      end if
      if (r <= n_repeats_diff) then
         call time_case(DIFFUSION, n_diff, r)
         call time_case(DIFFUSION_VIA_AS, n_diff, r)
      end if
   end do
   call stats(EMPTY_1, n_repeats_empty, cp_contig)
   call stats(EMPTY_10, n_repeats_empty, cp_arrs)
   call stats(EMPTY_40, n_repeats_empty, cp_arrs)
   call stats(EMPTY_1_NOCACHE, n_repeats_empty, cp_contig)
   call stats(SECTION_J, n_repeats_empty, cp_section_j)
   call stats(SECTION_STRIDE2, n_repeats_empty, cp_stride2)
   call stats(EMPTY_1_VIA_AS, n_repeats_empty, cp_via_as)
   call stats(DIFFUSION, n_repeats_diff, cp_lbound)
   call stats(DIFFUSION_VIA_AS, n_repeats_diff, cp_via_as)

   close (u)

contains

   ! One intermediate level with plain assumed-shape dummies (typical model code).
   subroutine via_assumed_shape_probe(x)
      real(c_double), intent(inout) :: x(:, :, :)
      call bridge_probe(x, info, .true._c_bool, rc)
   end subroutine via_assumed_shape_probe

   subroutine via_assumed_shape_empty_1(x, rcx)
      real(c_double), intent(inout) :: x(:, :, :)
      integer(c_int), intent(out) :: rcx
      call bridge_empty_1(x, rcx)
   end subroutine via_assumed_shape_empty_1

   subroutine via_assumed_shape_diffusion(xin, xout, rcx)
      real(c_double), intent(inout) :: xin(:, :, :), xout(:, :, :)
      integer(c_int), intent(out) :: rcx
      call bridge_diffusion(xin, xout, alpha, int(halo, c_int), rcx)
   end subroutine via_assumed_shape_diffusion

   subroutine probe_logical_ff()
      ! logical(c_bool) holding byte 0xFF (what NVHPC stores for .TRUE.)
      logical(c_bool) :: lff
      integer(c_int8_t) :: byte
      byte = -1_c_int8_t
      lff = transfer(byte, lff)
      info = -1
      call bridge_probe(a, info, lff, rc)
      write (u, '(a,1x,i0)') "probe.logical_0xff.rc", rc
      write (u, '(a,1x,i0)') "probe.logical_0xff_seen_as", info(5)
   end subroutine probe_logical_ff

   subroutine stats(id, nrep, copied)
      integer, intent(in) :: id, nrep
      logical, intent(in) :: copied
      call emit_stats(trim(case_names(id)), samples(id, 1:nrep), case_calls(id), copied, &
                      case_errors(id))
   end subroutine stats

   ! Call `i` (of a repeat) of case `id`, as the model would write it at its call site.
   subroutine call_case(id, i)
      integer, intent(in) :: id, i
      select case (id)
      case (EMPTY_1)
         call bridge_empty_1(a, rc)
      case (EMPTY_10)
         call bridge_empty_10(arrs(1)%v, arrs(2)%v, arrs(3)%v, arrs(4)%v, arrs(5)%v, &
                              arrs(6)%v, arrs(7)%v, arrs(8)%v, arrs(9)%v, arrs(10)%v, rc)
      case (EMPTY_40)
         call bridge_empty_40(arrs(1)%v, arrs(2)%v, arrs(3)%v, arrs(4)%v, arrs(5)%v, &
                              arrs(6)%v, arrs(7)%v, arrs(8)%v, arrs(9)%v, arrs(10)%v, &
                              arrs(11)%v, arrs(12)%v, arrs(13)%v, arrs(14)%v, arrs(15)%v, &
                              arrs(16)%v, arrs(17)%v, arrs(18)%v, arrs(19)%v, arrs(20)%v, &
                              arrs(21)%v, arrs(22)%v, arrs(23)%v, arrs(24)%v, arrs(25)%v, &
                              arrs(26)%v, arrs(27)%v, arrs(28)%v, arrs(29)%v, arrs(30)%v, &
                              arrs(31)%v, arrs(32)%v, arrs(33)%v, arrs(34)%v, arrs(35)%v, &
                              arrs(36)%v, arrs(37)%v, arrs(38)%v, arrs(39)%v, arrs(40)%v, rc)
      case (EMPTY_1_NOCACHE)        ! a, b, c in turn: defeats lru_cache(maxsize=2)
         select case (mod(i, 3))
         case (1)
            call bridge_empty_1(a, rc)
         case (2)
            call bridge_empty_1(b, rc)
         case default
            call bridge_empty_1(c, rc)
         end select
      case (SECTION_J)
         call bridge_empty_1(a(:, 2:ey - 1, :), rc)
      case (SECTION_STRIDE2)
         call bridge_empty_1(a(::2, :, :), rc)
      case (EMPTY_1_VIA_AS)
         call via_assumed_shape_empty_1(a, rc)
      case (DIFFUSION)
         call bridge_diffusion(fin, fout, alpha, int(halo, c_int), rc)
      case (DIFFUSION_VIA_AS)
         call via_assumed_shape_diffusion(fin, fout, rc)
      end select
   end subroutine call_case

   ! One repeat (round r) of case `id`: n calls.
   subroutine time_case(id, n, r)
      integer, intent(in) :: id, n, r
      integer :: i
      nerr = 0
      call system_clock(t0)
      do i = 1, n
         call call_case(id, i)
         if (rc /= layer_ok) nerr = nerr + 1
      end do
      call system_clock(t1)
      samples(id, r) = per_call_us(t0, t1, n)
      case_calls(id) = n
      case_errors(id) = case_errors(id) + nerr
   end subroutine time_case

   ! Correctness of the diffusion step against the Fortran reference.
   subroutine check_diffusion(id)
      integer, intent(in) :: id
      fout = -7.0_c_double
      call call_case(id, 1)
      call emit_diffusion_check(trim(case_names(id)), rc, layer_ok, fin, fout)
   end subroutine check_diffusion

end program bench_driver
