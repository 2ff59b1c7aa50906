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
   use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit, compiler_version
   use bench_layer, only: layer_name, layer_ok, bridge_empty_1, bridge_empty_10, &
                          bridge_empty_40, bridge_diffusion, bridge_probe, bridge_fail
   implicit none

   type :: arr3_t
      real(c_double), allocatable :: v(:, :, :)
   end type arr3_t

   ! ---- problem sizes ---------------------------------------------------------
   integer, parameter :: ex = 20, ey = 20, ez = 10                  ! empty-call arrays
   integer, parameter :: dnx = 128, dny = 128, dnz = 40, halo = 2   ! diffusion interior, halo
   ! repeats are interleaved: round r times every case once, so that load from
   ! other processes is spread over all cases instead of hitting one of them
   integer, parameter :: n_repeats_empty = 9, n_repeats_diff = 7
   integer, parameter :: base_calls_empty = 20000, base_calls_diff = 30
   real(c_double), parameter :: alpha = 0.1_c_double

   real(c_double), allocatable, target :: a(:, :, :), b(:, :, :), c(:, :, :)
   real(c_double), allocatable, target :: fin(:, :, :), fout(:, :, :), fref(:, :, :)
   real(c_double), allocatable :: before(:, :, :)
   type(arr3_t), allocatable, target :: arrs(:)
   integer(c_long), target :: info(8)
   integer(c_int) :: rc
   integer :: u, k, n_empty, n_diff, nerr
   real(real64) :: scale, scale_diff, t_init, maxdiff
   character(len=512) :: outfile, arg
   logical :: cp_contig, cp_arrs, cp_section_j, cp_stride2, cp_lbound, cp_via_as
   integer(int64) :: t0, t1, rate
   integer, parameter :: n_cases = 9
   character(len=32), parameter :: case_names(n_cases) = [character(len=32) :: &
      "empty_1", "empty_10", "empty_40", "empty_1_nocache", "section_j", "section_stride2", &
      "empty_1_via_assumed_shape", "diffusion", "diffusion_via_assumed_shape"]
   real(real64) :: samples(n_cases, max(n_repeats_empty, n_repeats_diff))
   integer :: case_calls(n_cases), case_errors(n_cases), r

   call get_command_argument(1, outfile)
   if (len_trim(outfile) == 0) outfile = "py2fgen_raw.txt"
   scale = 1.0_real64
   if (command_argument_count() >= 2) then
      call get_command_argument(2, arg)
      read (arg, *) scale
   end if
   scale_diff = scale
   if (command_argument_count() >= 3) then
      call get_command_argument(3, arg)
      read (arg, *) scale_diff
   end if
   n_empty = max(12, nint(base_calls_empty*scale))
   n_empty = 3*((n_empty + 2)/3)            ! multiple of 3 for the rotating case
   n_diff = max(3, nint(base_calls_diff*scale_diff))

   open (newunit=u, file=trim(outfile), status="replace", action="write")
   write (u, '(a,1x,a)') "layer", layer_name
   write (u, '(a,1x,a)') "fortran_compiler", compiler_version()
   call system_clock(count_rate=rate)
   write (u, '(a,1x,i0)') "system_clock_rate_hz", rate

   ! ---- arrays ------------------------------------------------------------------
   allocate (a(ex, ey, ez), b(ex, ey, ez), c(ex, ey, ez))
   call random_number(a); b = a; c = a
   allocate (arrs(40))
   do k = 1, 40
      allocate (arrs(k)%v(ex, ey, ez))
      arrs(k)%v = real(k, c_double)
   end do
   ! diffusion fields: interior dnx x dny x dnz plus a halo of width `halo`
   ! in i and j, lower bound 1-halo (so lbound /= 1 is exercised too)
   allocate (fin(1 - halo:dnx + halo, 1 - halo:dny + halo, dnz))
   allocate (fout, fref, mold=fin)
   call random_number(fin)
   fout = 0

   ! ---- 1. first call: starts the embedded interpreter ----------------------------
   call system_clock(t0)
   call bridge_empty_1(a, rc)
   call system_clock(t1)
   t_init = real(t1 - t0, real64)/real(rate, real64)*1.0e3_real64
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
   cp_contig = info(1) /= addr(c_loc(a(1, 1, 1)))
   call emit_probe("contiguous", addr(c_loc(a(1, 1, 1))), cp_contig, &
                   all(a == before + 1), shape(a))
   a = before

   info = -1
   call bridge_probe(a(:, 2:ey - 1, :), info, .true._c_bool, rc)
   cp_section_j = info(1) /= addr(c_loc(a(1, 2, 1)))
   call emit_probe("section_j", addr(c_loc(a(1, 2, 1))), cp_section_j, &
                   all(a(:, 2:ey - 1, :) == before(:, 2:ey - 1, :) + 1) .and. &
                   all(a(:, 1, :) == before(:, 1, :)) .and. all(a(:, ey, :) == before(:, ey, :)), &
                   shape(a(:, 2:ey - 1, :)))
   a = before

   info = -1
   call bridge_probe(a(::2, :, :), info, .true._c_bool, rc)
   cp_stride2 = info(1) /= addr(c_loc(a(1, 1, 1)))
   call emit_probe("section_stride2", addr(c_loc(a(1, 1, 1))), cp_stride2, &
                   all(a(1::2, :, :) == before(1::2, :, :) + 1) .and. &
                   all(a(2::2, :, :) == before(2::2, :, :)), shape(a(::2, :, :)))
   a = before

   info = -1
   call via_assumed_shape_probe(a)
   cp_via_as = info(1) /= addr(c_loc(a(1, 1, 1)))
   call emit_probe("via_assumed_shape", addr(c_loc(a(1, 1, 1))), cp_via_as, &
                   all(a == before + 1), shape(a))
   a = before
   deallocate (before)

   allocate (before, source=arrs(1)%v)
   info = -1
   call bridge_probe(arrs(1)%v, info, .true._c_bool, rc)
   cp_arrs = info(1) /= addr(c_loc(arrs(1)%v(1, 1, 1)))
   call emit_probe("derived_type_component", addr(c_loc(arrs(1)%v(1, 1, 1))), cp_arrs, &
                   all(arrs(1)%v == before + 1), shape(arrs(1)%v))
   arrs(1)%v = before
   deallocate (before)

   allocate (before, source=fin)
   info = -1
   call bridge_probe(fin, info, .true._c_bool, rc)
   cp_lbound = info(1) /= addr(c_loc(fin(1 - halo, 1 - halo, 1)))
   call emit_probe("lbound_minus1", addr(c_loc(fin(1 - halo, 1 - halo, 1))), cp_lbound, &
                   all(fin == before + 1), shape(fin))
   write (u, '(a,3(1x,i0))') "probe.lbound_minus1.fortran_lbound", lbound(fin)
   fin = before
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
   call check_diffusion("diffusion", .false.)
   call check_diffusion("diffusion_via_assumed_shape", .true.)
   do r = 1, max(n_repeats_empty, n_repeats_diff)
      if (r <= n_repeats_empty) then
         call time_empty_1(1, 0, r)          ! a
         call time_empty_10(2, r)
         call time_empty_40(3, r)
         call time_empty_1(4, 1, r)          ! a, b, c in turn: defeats lru_cache(maxsize=2)
         call time_empty_1(5, 2, r)          ! a(:, 2:ey-1, :)
         call time_empty_1(6, 3, r)          ! a(::2, :, :)
         call time_empty_1(7, 4, r)          ! a through an assumed-shape dummy
      end if
      if (r <= n_repeats_diff) then
         call time_diffusion(8, .false., r)
         call time_diffusion(9, .true., r)
      end if
   end do
   call emit_stats(1, n_repeats_empty, cp_contig)
   call emit_stats(2, n_repeats_empty, cp_arrs)
   call emit_stats(3, n_repeats_empty, cp_arrs)
   call emit_stats(4, n_repeats_empty, cp_contig)
   call emit_stats(5, n_repeats_empty, cp_section_j)
   call emit_stats(6, n_repeats_empty, cp_stride2)
   call emit_stats(7, n_repeats_empty, cp_via_as)
   call emit_stats(8, n_repeats_diff, cp_lbound)
   call emit_stats(9, n_repeats_diff, cp_via_as)

   close (u)

contains

   integer(c_intptr_t) function addr(p)
      type(c_ptr), intent(in) :: p
      addr = transfer(p, 0_c_intptr_t)
   end function addr

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

   subroutine emit_probe(name, faddr, cpd, wb, shp)
      character(*), intent(in) :: name
      integer(c_intptr_t), intent(in) :: faddr
      logical, intent(in) :: cpd, wb
      integer, intent(in) :: shp(3)
      write (u, '(a,1x,i0)') "probe."//name//".rc", rc
      write (u, '(a,1x,i0)') "probe."//name//".fortran_addr", faddr
      write (u, '(a,1x,i0)') "probe."//name//".python_addr", info(1)
      write (u, '(a,1x,l1)') "probe."//name//".copied", cpd
      write (u, '(a,1x,l1)') "probe."//name//".writes_back", wb
      write (u, '(a,3(1x,i0))') "probe."//name//".fortran_shape", shp
      write (u, '(a,3(1x,i0))') "probe."//name//".python_shape", info(2:4)
      write (u, '(a,1x,i0)') "probe."//name//".logical_true_seen_as", info(5)
      write (u, '(a,1x,i0)') "probe."//name//".python_f_contiguous", info(6)
      write (u, '(a,1x,i0)') "probe."//name//".python_writeable", info(7)
      write (u, '(a,1x,i0)') "probe."//name//".python_type_tag", info(8)
      write (*, '(a,a,t40,a,l1,a,l1,a,i0)') "probe ", name, " copied=", cpd, &
         "  writes_back=", wb, "  rc=", rc
   end subroutine emit_probe

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

   subroutine emit_stats(id, nrep, copied)
      integer, intent(in) :: id, nrep
      logical, intent(in) :: copied
      real(real64) :: x(nrep), med
      character(len=:), allocatable :: name
      name = trim(case_names(id))
      x = samples(id, 1:nrep)                 ! per-call microseconds
      call sort(x)
      if (mod(nrep, 2) == 1) then
         med = x((nrep + 1)/2)
      else
         med = 0.5_real64*(x(nrep/2) + x(nrep/2 + 1))
      end if
      write (u, '(a,1x,g0)') "cases."//name//".median_us", med
      write (u, '(a,1x,g0)') "cases."//name//".min_us", x(1)
      write (u, '(a,1x,g0)') "cases."//name//".max_us", x(nrep)
      write (u, '(a,1x,i0)') "cases."//name//".repeats", nrep
      write (u, '(a,1x,i0)') "cases."//name//".calls_per_repeat", case_calls(id)
      write (u, '(a,1x,l1)') "cases."//name//".copied", copied
      write (u, '(a,1x,i0)') "cases."//name//".failed_calls", case_errors(id)
      flush (u)
      write (*, '(a,t30,a,f12.3,a,f12.3,a,i0,a,i0,a,l1)') name, " median_us=", med, &
         "  min_us=", x(1), "  repeats=", nrep, "  calls=", case_calls(id), "  copied=", copied
   end subroutine emit_stats

   subroutine sort(x)
      real(real64), intent(inout) :: x(:)
      integer :: p, q
      real(real64) :: tmp
      do p = 2, size(x)
         tmp = x(p)
         q = p - 1
         do while (q >= 1)
            if (x(q) <= tmp) exit
            x(q + 1) = x(q)
            q = q - 1
         end do
         x(q + 1) = tmp
      end do
   end subroutine sort

   real(real64) function per_call_us(ta, tb, n)
      integer(int64), intent(in) :: ta, tb
      integer, intent(in) :: n
      per_call_us = real(tb - ta, real64)/real(rate, real64)*1.0e6_real64/real(n, real64)
   end function per_call_us

   ! One repeat (round r) of case `id`: n_empty calls of bridge_empty_1.
   ! mode 0: a;  1: a, b, c in turn;  2: a(:,2:ey-1,:);  3: a(::2,:,:);
   ! mode 4: a through an intermediate assumed-shape dummy
   subroutine time_empty_1(id, mode, r)
      integer, intent(in) :: id, mode, r
      integer :: i
      nerr = 0
      select case (mode)
      case (0)
         call system_clock(t0)
         do i = 1, n_empty
            call bridge_empty_1(a, rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
         call system_clock(t1)
      case (1)
         call system_clock(t0)
         do i = 1, n_empty, 3
            call bridge_empty_1(a, rc)
            if (rc /= layer_ok) nerr = nerr + 1
            call bridge_empty_1(b, rc)
            if (rc /= layer_ok) nerr = nerr + 1
            call bridge_empty_1(c, rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
         call system_clock(t1)
      case (2)
         call system_clock(t0)
         do i = 1, n_empty
            call bridge_empty_1(a(:, 2:ey - 1, :), rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
         call system_clock(t1)
      case (3)
         call system_clock(t0)
         do i = 1, n_empty
            call bridge_empty_1(a(::2, :, :), rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
         call system_clock(t1)
      case (4)
         call system_clock(t0)
         do i = 1, n_empty
            call via_assumed_shape_empty_1(a, rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
         call system_clock(t1)
      end select
      samples(id, r) = per_call_us(t0, t1, n_empty)
      case_calls(id) = n_empty
      case_errors(id) = case_errors(id) + nerr
   end subroutine time_empty_1

   subroutine time_empty_10(id, r)
      integer, intent(in) :: id, r
      integer :: i
      nerr = 0
      call system_clock(t0)
      do i = 1, n_empty
         call bridge_empty_10( &
            arrs(1)%v, &
            arrs(2)%v, &
            arrs(3)%v, &
            arrs(4)%v, &
            arrs(5)%v, &
            arrs(6)%v, &
            arrs(7)%v, &
            arrs(8)%v, &
            arrs(9)%v, &
            arrs(10)%v, &
            rc)
         if (rc /= layer_ok) nerr = nerr + 1
      end do
      call system_clock(t1)
      samples(id, r) = per_call_us(t0, t1, n_empty)
      case_calls(id) = n_empty
      case_errors(id) = case_errors(id) + nerr
   end subroutine time_empty_10

   subroutine time_empty_40(id, r)
      integer, intent(in) :: id, r
      integer :: i
      nerr = 0
      call system_clock(t0)
      do i = 1, n_empty
         call bridge_empty_40( &
            arrs(1)%v, &
            arrs(2)%v, &
            arrs(3)%v, &
            arrs(4)%v, &
            arrs(5)%v, &
            arrs(6)%v, &
            arrs(7)%v, &
            arrs(8)%v, &
            arrs(9)%v, &
            arrs(10)%v, &
            arrs(11)%v, &
            arrs(12)%v, &
            arrs(13)%v, &
            arrs(14)%v, &
            arrs(15)%v, &
            arrs(16)%v, &
            arrs(17)%v, &
            arrs(18)%v, &
            arrs(19)%v, &
            arrs(20)%v, &
            arrs(21)%v, &
            arrs(22)%v, &
            arrs(23)%v, &
            arrs(24)%v, &
            arrs(25)%v, &
            arrs(26)%v, &
            arrs(27)%v, &
            arrs(28)%v, &
            arrs(29)%v, &
            arrs(30)%v, &
            arrs(31)%v, &
            arrs(32)%v, &
            arrs(33)%v, &
            arrs(34)%v, &
            arrs(35)%v, &
            arrs(36)%v, &
            arrs(37)%v, &
            arrs(38)%v, &
            arrs(39)%v, &
            arrs(40)%v, &
            rc)
         if (rc /= layer_ok) nerr = nerr + 1
      end do
      call system_clock(t1)
      samples(id, r) = per_call_us(t0, t1, n_empty)
      case_calls(id) = n_empty
      case_errors(id) = case_errors(id) + nerr
   end subroutine time_empty_40

   ! Correctness of the diffusion step against a Fortran reference (this also
   ! shows that the writes into field_out come back to Fortran).
   subroutine check_diffusion(name, via_as)
      character(*), intent(in) :: name
      logical, intent(in) :: via_as
      fout = -7.0_c_double
      if (via_as) then
         call via_assumed_shape_diffusion(fin, fout, rc)
      else
         call bridge_diffusion(fin, fout, alpha, int(halo, c_int), rc)
      end if
      fref = -7.0_c_double
      fref(1:dnx, 1:dny, :) = fin(1:dnx, 1:dny, :) + alpha*( &
                              fin(0:dnx - 1, 1:dny, :) + fin(2:dnx + 1, 1:dny, :) + &
                              fin(1:dnx, 0:dny - 1, :) + fin(1:dnx, 2:dny + 1, :) - &
                              4.0_c_double*fin(1:dnx, 1:dny, :))
      maxdiff = maxval(abs(fout - fref))
      write (u, '(a,1x,i0)') "cases."//name//".check_rc", rc
      write (u, '(a,1x,g0)') "cases."//name//".max_abs_diff_vs_fortran", maxdiff
      write (u, '(a,1x,l1)') "cases."//name//".result_ok", (rc == layer_ok .and. maxdiff < 1.0e-12_real64)
      write (u, '(a,3(1x,i0))') "cases."//name//".shape_with_halo", shape(fin)
      write (u, '(a,1x,i0)') "cases."//name//".halo", halo
   end subroutine check_diffusion

   subroutine time_diffusion(id, via_as, r)
      integer, intent(in) :: id, r
      logical, intent(in) :: via_as
      integer :: i
      nerr = 0
      call system_clock(t0)
      if (via_as) then
         do i = 1, n_diff
            call via_assumed_shape_diffusion(fin, fout, rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
      else
         do i = 1, n_diff
            call bridge_diffusion(fin, fout, alpha, int(halo, c_int), rc)
            if (rc /= layer_ok) nerr = nerr + 1
         end do
      end if
      call system_clock(t1)
      samples(id, r) = per_call_us(t0, t1, n_diff)
      case_calls(id) = n_diff
      case_errors(id) = case_errors(id) + nerr
   end subroutine time_diffusion

end program bench_driver
