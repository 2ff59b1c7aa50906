! Fortran -> Python call overhead, our bridge (libgtstorage_python) used as a model uses it:
! the arrays are wrapped ONCE (gtstorage_wrap), the functions resolved once, and then every
! timed call passes the same storage handles (gtstorage_python_call) -- no wrap per call.
! Compare with bench_driver + layer_gtstorage.F90, which wraps and releases at every call
! (the call site py2fgen has: the arrays passed at each call).
!
! Usage:  bench_persistent OUT_FILE [SCALE [SCALE_DIFF]]     (as bench_driver)
!
! Same arrays, sizes, repeats and interleaving as bench_driver.F90; the Python functions
! are bench_functions_gtstorage.py.  Environment: BENCH_GTSTORAGE_SYS_PATH (':'-separated
! directories put first on sys.path: the gtstorage package and this directory),
! VIRTUAL_ENV (a Python 3.12.1 venv with NumPy).
!
! Cases (per call; median and min over the repeats):
!   empty_0            no storage at all: the fixed cost of one call
!   empty_1/10/40      1/10/40 storages (arrays wrapped once)
!   empty_1_rotating   a, b, c in turn through the same position (like a time loop that
!                      swaps fields; our view cache is keyed by handle, so these still hit)
!   section_j          a(:, 2:ey-1, :) wrapped once (non-contiguous, by its strides)
!   section_stride2    a(::2, :, :)    wrapped once
!   wrap_release_1     gtstorage_wrap + gtstorage_release of one array, no Python call
!   wrap_release_40    the same for the 40 arrays: what layer_gtstorage.F90 adds in Fortran/C
!   diffusion          fin/fout wrapped once with halo=[h, h, 0], alpha as a keyword
program bench_persistent
   use, intrinsic :: iso_c_binding
   use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
   use gtstorage
   use gtstorage_python
   use bench_harness
   use bench_layer, only: init_python_from_environment
   implicit none

   character(*), parameter :: pymod = "bench_functions_gtstorage"

   real(c_double), allocatable, target :: a(:, :, :), b(:, :, :), c(:, :, :)
   real(c_double), allocatable, target :: fin(:, :, :), fout(:, :, :)
   real(c_double), allocatable :: before(:, :, :)
   type(arr3_t), allocatable, target :: arrs(:)
   integer(c_long), allocatable, target :: info(:)

   integer(gtstorage_handle_kind) :: ha(1), habc(3), hsj(1), hs2(1), harr(40), hd(2), &
                                     hinfo, hfin_nohalo, hnone(0)
   integer(gtstorage_python_function_kind) :: fn_e0, fn_e1, fn_e10, fn_e40, fn_diff, &
                                              fn_probe, fn_fail
   type(gtstorage_stats) :: stats0, stats1
   integer :: k, st, nerr, r
   integer(int64) :: t0, t1
   integer, parameter :: n_cases = 10
   character(len=32), parameter :: case_names(n_cases) = [character(len=32) :: &
      "empty_0", "empty_1", "empty_10", "empty_40", "empty_1_rotating", "section_j", &
      "section_stride2", "wrap_release_1", "wrap_release_40", "diffusion"]
   logical :: case_copied(n_cases)
   real(real64) :: samples(n_cases, max(n_repeats_empty, n_repeats_diff))
   integer :: case_calls(n_cases), case_errors(n_cases)
   logical :: cp_contig, cp_sj, cp_s2, cp_arrs, cp_lb

   call open_results("gtstorage_persistent_raw.txt", "gtstorage_persistent")
   write (u, '(a,1x,a)') "library_version", gtstorage_version_string()

   ! ---- the model's arrays (as in bench_driver.F90) -------------------------------------
   call allocate_fields(a, b, c, arrs, fin, fout)
   allocate (info(8))

   ! ---- interpreter + functions, once --------------------------------------------------------
   call system_clock(t0)
   call init_python_from_environment(st)
   call need(st, "gtstorage_python_init")
   call resolve(fn_e0, "empty_0")
   call resolve(fn_e1, "empty_1")
   call resolve(fn_e10, "empty_10")
   call resolve(fn_e40, "empty_40")
   call resolve(fn_diff, "diffusion")
   call resolve(fn_probe, "probe")
   call resolve(fn_fail, "fail")
   call system_clock(t1)
   write (u, '(a,1x,g0)') "init_and_resolve_ms", elapsed_ms(t0, t1)
   write (*, '(a,f10.1)') "gtstorage_python_init + 7 x resolve: ms=", elapsed_ms(t0, t1)

   ! ---- wrap once ---------------------------------------------------------------------------
   call gtstorage_wrap(ha(1), a, status=st); call need(st, "wrap a")
   habc(1) = ha(1)
   call gtstorage_wrap(habc(2), b, status=st); call need(st, "wrap b")
   call gtstorage_wrap(habc(3), c, status=st); call need(st, "wrap c")
   call gtstorage_wrap(hsj(1), a(:, 2:ey - 1, :), status=st); call need(st, "wrap section_j")
   call gtstorage_wrap(hs2(1), a(::2, :, :), status=st); call need(st, "wrap section_stride2")
   do k = 1, 40
      call gtstorage_wrap(harr(k), arrs(k)%v, status=st); call need(st, "wrap arrs(k)")
   end do
   call gtstorage_wrap(hd(1), fin, halo=[halo, halo, 0], status=st); call need(st, "wrap fin")
   call gtstorage_wrap(hd(2), fout, halo=[halo, halo, 0], status=st); call need(st, "wrap fout")
   call gtstorage_wrap(hfin_nohalo, fin, status=st); call need(st, "wrap fin (no halo)")
   call gtstorage_wrap(hinfo, info, status=st); call need(st, "wrap info")

   call system_clock(t0)
   call gtstorage_python_call(fn_e1, ha, status=st)
   call system_clock(t1)
   write (u, '(a,1x,g0)') "first_call_ms", elapsed_ms(t0, t1)
   write (u, '(a,1x,i0)') "first_call_rc", st

   ! ---- probes through the persistent handles ----------------------------------------------
   allocate (before, source=a)
   call probe(ha(1), .true.)
   call emit_whole_probe("contiguous", st, info, a, before, cp_contig)
   ! the same handle again (cached view): Fortran changed a in between, Python sees it
   call probe(ha(1), .true.)
   write (u, '(a,1x,l1)') "probe.contiguous_second_call_sees_fortran_writes", all(a == before + 1)
   a = before

   call probe(hsj(1), .true.)
   cp_sj = info(1) /= addr(c_loc(a(1, 2, 1)))
   call emit_probe("section_j", st, info, addr(c_loc(a(1, 2, 1))), cp_sj, &
                   section_j_written_back(a, before), shape(a(:, 2:ey - 1, :)))
   a = before

   call probe(hs2(1), .true.)
   cp_s2 = info(1) /= addr(c_loc(a(1, 1, 1)))
   call emit_probe("section_stride2", st, info, addr(c_loc(a(1, 1, 1))), cp_s2, &
                   stride2_written_back(a, before), shape(a(::2, :, :)))
   a = before
   deallocate (before)

   allocate (before, source=arrs(1)%v)
   call probe(harr(1), .true.)
   call emit_whole_probe("derived_type_component", st, info, arrs(1)%v, before, cp_arrs)
   deallocate (before)

   allocate (before, source=fin)
   call probe(hfin_nohalo, .true.)
   call emit_whole_probe("lbound_minus1", st, info, fin, before, cp_lb)
   write (u, '(a,3(1x,i0))') "probe.lbound_minus1.fortran_lbound", lbound(fin)
   deallocate (before)

   allocate (before, source=a)
   call probe(ha(1), .false.)
   write (u, '(a,1x,i0)') "probe.logical_false_seen_as", info(5)
   a = before
   deallocate (before)

   ! ---- errors: the Python function raises ---------------------------------------------------
   call gtstorage_python_call(fn_fail, ha, status=st)
   write (u, '(a,1x,i0)') "error.rc_when_python_raises", st
   write (u, '(a,1x,a)') "error.status_name", gtstorage_status_name(st)
   write (u, '(a,1x,a)') "error.message", gtstorage_last_error()
   call gtstorage_python_call(fn_e1, ha, status=st)
   write (u, '(a,1x,i0)') "error.rc_next_call_after_exception", st
   ! a storage that does not match the declaration (1-D int64 where 3-D float64 is declared)
   call gtstorage_python_call(fn_e1, [hinfo], status=st)
   write (u, '(a,1x,i0)') "error.rc_wrong_argument", st
   write (u, '(a,1x,a)') "error.message_wrong_argument", gtstorage_last_error()
   flush (u)

   ! ---- diffusion check ------------------------------------------------------------------------
   fout = -7.0_c_double
   call gtstorage_python_call(fn_diff, hd, status=st, args=[py_real("alpha", alpha)])
   call emit_diffusion_check("diffusion", st, GTSTORAGE_OK, fin, fout)

   ! ---- timings (interleaved rounds) ---------------------------------------------------------
   case_errors = 0
   case_copied = .false.
   case_copied([2, 3, 4, 5, 8, 9]) = cp_contig .or. cp_arrs
   case_copied(6) = cp_sj
   case_copied(7) = cp_s2
   case_copied(10) = cp_lb
   call gtstorage_get_stats(stats0)
   do r = 1, max(n_repeats_empty, n_repeats_diff)
      if (r <= n_repeats_empty) then
         call time_call(1, fn_e0, hnone, r, n_empty)
         call time_call(2, fn_e1, ha, r, n_empty)
         call time_call(3, fn_e10, harr(1:10), r, n_empty)
         call time_call(4, fn_e40, harr, r, n_empty)
         call time_rotating(5, r)
         call time_call(6, fn_e1, hsj, r, n_empty)
         call time_call(7, fn_e1, hs2, r, n_empty)
         call time_wrap_release_1(8, r)
         call time_wrap_release_40(9, r)
      end if
      if (r <= n_repeats_diff) call time_call(10, fn_diff, hd, r, n_diff, [py_real("alpha", alpha)])
   end do
   call gtstorage_get_stats(stats1)
   write (u, '(a,1x,i0)') "library.live_handles_change_during_timing", &
      stats1%live_handles - stats0%live_handles
   write (u, '(a,1x,i0)') "library.host_bytes_change_during_timing", &
      stats1%host_bytes - stats0%host_bytes
   write (u, '(a,1x,i0)') "library.transfer_bytes_during_timing", &
      (stats1%h2d_bytes - stats0%h2d_bytes) + (stats1%d2h_bytes - stats0%d2h_bytes)
   do k = 1, n_cases
      if (k == 10) then
         call emit_stats(trim(case_names(k)), samples(k, 1:n_repeats_diff), case_calls(k), &
                         case_copied(k), case_errors(k))
      else
         call emit_stats(trim(case_names(k)), samples(k, 1:n_repeats_empty), case_calls(k), &
                         case_copied(k), case_errors(k))
      end if
   end do

   ! ---- clean up -----------------------------------------------------------------------------
   call gtstorage_release(ha(1))
   call gtstorage_release(habc(2))
   call gtstorage_release(habc(3))
   call gtstorage_release(hsj(1))
   call gtstorage_release(hs2(1))
   do k = 1, 40
      call gtstorage_release(harr(k))
   end do
   call gtstorage_release(hd(1))
   call gtstorage_release(hd(2))
   call gtstorage_release(hfin_nohalo)
   call gtstorage_release(hinfo)
   call gtstorage_python_finalize(st)
   write (u, '(a,1x,i0)') "finalize_rc", st
   close (u)

contains

   subroutine need(st, what)
      integer, intent(in) :: st
      character(*), intent(in) :: what
      if (st /= GTSTORAGE_OK) then
         write (error_unit, '(a)') "bench_persistent: "//what//" failed: "//gtstorage_last_error()
         error stop 2
      end if
   end subroutine need

   subroutine resolve(fn, name)
      integer(gtstorage_python_function_kind), intent(out) :: fn
      character(*), intent(in) :: name
      integer :: st
      call gtstorage_python_resolve(fn, pymod//":"//name, status=st)
      call need(st, "resolve "//name)
   end subroutine resolve

   subroutine probe(h, flag)
      integer(gtstorage_handle_kind), intent(in) :: h
      logical, intent(in) :: flag
      info = -1
      call gtstorage_python_call(fn_probe, [h, hinfo], status=st, args=[py_logical("flag", flag)])
   end subroutine probe

   subroutine record(id, r, n)
      integer, intent(in) :: id, r, n
      samples(id, r) = per_call_us(t0, t1, n)
      case_calls(id) = n
      case_errors(id) = case_errors(id) + nerr
   end subroutine record

   ! n calls of fn with the same handles (and the same keyword arguments, if any)
   subroutine time_call(id, fn, h, r, n, args)
      integer, intent(in) :: id, r, n
      integer(gtstorage_python_function_kind), intent(in) :: fn
      integer(gtstorage_handle_kind), intent(in) :: h(:)
      type(gtstorage_python_value), intent(in), optional :: args(:)
      integer :: i, sti
      nerr = 0
      call system_clock(t0)
      do i = 1, n
         call gtstorage_python_call(fn, h, status=sti, args=args)
         if (sti /= GTSTORAGE_OK) nerr = nerr + 1
      end do
      call system_clock(t1)
      call record(id, r, n)
   end subroutine time_call

   subroutine time_rotating(id, r)
      integer, intent(in) :: id, r
      integer :: i, sti
      nerr = 0
      call system_clock(t0)
      do i = 1, n_empty, 3
         call gtstorage_python_call(fn_e1, habc(1:1), status=sti)
         if (sti /= GTSTORAGE_OK) nerr = nerr + 1
         call gtstorage_python_call(fn_e1, habc(2:2), status=sti)
         if (sti /= GTSTORAGE_OK) nerr = nerr + 1
         call gtstorage_python_call(fn_e1, habc(3:3), status=sti)
         if (sti /= GTSTORAGE_OK) nerr = nerr + 1
      end do
      call system_clock(t1)
      call record(id, r, n_empty)
   end subroutine time_rotating

   subroutine time_wrap_release_1(id, r)
      integer, intent(in) :: id, r
      integer :: i, sti
      integer(gtstorage_handle_kind) :: h
      nerr = 0
      call system_clock(t0)
      do i = 1, n_empty
         call gtstorage_wrap(h, a, status=sti)
         if (sti /= GTSTORAGE_OK) nerr = nerr + 1
         call gtstorage_release(h, status=sti)
      end do
      call system_clock(t1)
      call record(id, r, n_empty)
   end subroutine time_wrap_release_1

   subroutine time_wrap_release_40(id, r)
      integer, intent(in) :: id, r
      integer :: i, j, sti
      integer(gtstorage_handle_kind) :: h(40)
      nerr = 0
      call system_clock(t0)
      do i = 1, n_empty
         do j = 1, 40
            call gtstorage_wrap(h(j), arrs(j)%v, status=sti)
            if (sti /= GTSTORAGE_OK) nerr = nerr + 1
         end do
         do j = 1, 40
            call gtstorage_release(h(j), status=sti)
         end do
      end do
      call system_clock(t1)
      call record(id, r, n_empty)
   end subroutine time_wrap_release_40

end program bench_persistent
