! What the two Fortran programs of the benchmark share: bench_driver.F90 (over a call layer)
! and bench_persistent.F90 (over gtstorage directly).  The problem sizes, the command line,
! the model's arrays, the "key value" result lines (turned into JSON by collect_results.py
! and compare_results.py), the per-case statistics and the Fortran reference of the diffusion
! step.  It knows no bridge, so the py2fgen build compiles it as well.
module bench_harness
   use, intrinsic :: iso_c_binding
   use, intrinsic :: iso_fortran_env, only: int64, real64, compiler_version
   implicit none
   private
   public :: arr3_t, ex, ey, ez, dnx, dny, dnz, halo, n_repeats_empty, n_repeats_diff, alpha
   public :: u, rate, n_empty, n_diff
   public :: open_results, allocate_fields, addr, per_call_us, elapsed_ms, emit_probe, &
             emit_stats, emit_diffusion_check, emit_whole_probe, section_j_written_back, &
             stride2_written_back

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

   integer, protected :: u = -1                  ! the results file
   integer(int64), protected :: rate = 1         ! system_clock ticks per second
   integer, protected :: n_empty = 0, n_diff = 0 ! calls per repeat

contains

   ! Reads OUT_FILE [SCALE [SCALE_DIFF]], opens OUT_FILE and writes the lines every layer has.
   subroutine open_results(default_file, layer)
      character(*), intent(in) :: default_file, layer
      character(len=512) :: outfile
      real(real64) :: scale, scale_diff
      call get_command_argument(1, outfile)
      if (len_trim(outfile) == 0) outfile = default_file
      scale = real_argument(2, 1.0_real64)
      scale_diff = real_argument(3, scale)
      n_empty = max(12, nint(base_calls_empty*scale))
      n_empty = 3*((n_empty + 2)/3)            ! multiple of 3 for the rotating case
      n_diff = max(3, nint(base_calls_diff*scale_diff))

      open (newunit=u, file=trim(outfile), status="replace", action="write")
      write (u, '(a,1x,a)') "layer", layer
      write (u, '(a,1x,a)') "fortran_compiler", compiler_version()
      call system_clock(count_rate=rate)
      write (u, '(a,1x,i0)') "system_clock_rate_hz", rate
   end subroutine open_results

   real(real64) function real_argument(k, default)
      integer, intent(in) :: k
      real(real64), intent(in) :: default
      character(len=512) :: arg
      real_argument = default
      if (command_argument_count() >= k) then
         call get_command_argument(k, arg)
         read (arg, *) real_argument
      end if
   end function real_argument

   ! The model's arrays: a, b, c and 40 components for the empty calls; the diffusion fields
   ! have an interior dnx x dny x dnz plus a halo of width `halo` in i and j, lower bound
   ! 1-halo (so lbound /= 1 is exercised too).
   subroutine allocate_fields(a, b, c, arrs, fin, fout)
      real(c_double), allocatable, intent(inout) :: a(:, :, :), b(:, :, :), c(:, :, :)
      type(arr3_t), allocatable, intent(inout) :: arrs(:)
      real(c_double), allocatable, intent(inout) :: fin(:, :, :), fout(:, :, :)
      integer :: k
      allocate (a(ex, ey, ez), b(ex, ey, ez), c(ex, ey, ez))
      call random_number(a); b = a; c = a
      allocate (arrs(40))
      do k = 1, 40
         allocate (arrs(k)%v(ex, ey, ez))
         arrs(k)%v = real(k, c_double)
      end do
      allocate (fin(1 - halo:dnx + halo, 1 - halo:dny + halo, dnz))
      allocate (fout, mold=fin)
      call random_number(fin)
      fout = 0
   end subroutine allocate_fields

   integer(c_intptr_t) function addr(p)
      type(c_ptr), intent(in) :: p
      addr = transfer(p, 0_c_intptr_t)
   end function addr

   real(real64) function per_call_us(ta, tb, n)
      integer(int64), intent(in) :: ta, tb
      integer, intent(in) :: n
      per_call_us = real(tb - ta, real64)/real(rate, real64)*1.0e6_real64/real(n, real64)
   end function per_call_us

   real(real64) function elapsed_ms(ta, tb)
      integer(int64), intent(in) :: ta, tb
      elapsed_ms = real(tb - ta, real64)/real(rate, real64)*1.0e3_real64
   end function elapsed_ms

   ! What the probe function reported in info (see bench_functions.probe) next to what Fortran
   ! knows of the array: faddr, shp; cpd: Python saw another address; wb: its writes came back.
   subroutine emit_probe(name, rc, info, faddr, cpd, wb, shp)
      character(*), intent(in) :: name
      integer, intent(in) :: rc
      integer(c_long), intent(in) :: info(8)
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

   ! The probe of a whole array x (before: its values before the probe): emit_probe's lines with
   ! the address and shape of x; then x gets its values back. copied: Python saw another address.
   subroutine emit_whole_probe(name, rc, info, x, before, copied)
      character(*), intent(in) :: name
      integer, intent(in) :: rc
      integer(c_long), intent(in) :: info(8)
      real(c_double), target, intent(inout) :: x(:, :, :)
      real(c_double), intent(in) :: before(:, :, :)
      logical, intent(out) :: copied
      copied = info(1) /= addr(c_loc(x(1, 1, 1)))
      call emit_probe(name, rc, info, addr(c_loc(x(1, 1, 1))), copied, all(x == before + 1), &
                      shape(x))
      x = before
   end subroutine emit_whole_probe

   ! The probe added 1 to a(:, 2:ey-1, :) of a (before: its values before) and nothing else.
   logical function section_j_written_back(a, before)
      real(c_double), intent(in) :: a(:, :, :), before(:, :, :)
      section_j_written_back = all(a(:, 2:ey - 1, :) == before(:, 2:ey - 1, :) + 1) .and. &
                               all(a(:, 1, :) == before(:, 1, :)) .and. &
                               all(a(:, ey, :) == before(:, ey, :))
   end function section_j_written_back

   ! The probe added 1 to a(::2, :, :) of a and nothing else.
   logical function stride2_written_back(a, before)
      real(c_double), intent(in) :: a(:, :, :), before(:, :, :)
      stride2_written_back = all(a(1::2, :, :) == before(1::2, :, :) + 1) .and. &
                             all(a(2::2, :, :) == before(2::2, :, :))
   end function stride2_written_back

   ! Median, min and max of one case's per-call microseconds (one sample per repeat).
   subroutine emit_stats(name, samples, calls, copied, failed_calls)
      character(*), intent(in) :: name
      real(real64), intent(in) :: samples(:)
      integer, intent(in) :: calls, failed_calls
      logical, intent(in) :: copied
      real(real64) :: x(size(samples)), med
      integer :: nrep
      nrep = size(samples)
      x = samples
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
      write (u, '(a,1x,i0)') "cases."//name//".calls_per_repeat", calls
      write (u, '(a,1x,l1)') "cases."//name//".copied", copied
      write (u, '(a,1x,i0)') "cases."//name//".failed_calls", failed_calls
      flush (u)
      write (*, '(a,t30,a,f12.3,a,f12.3,a,i0,a,i0,a,l1)') name, " median_us=", med, &
         "  min_us=", x(1), "  repeats=", nrep, "  calls=", calls, "  copied=", copied
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

   ! Correctness of one diffusion step (fout, the call's status rc) against a Fortran reference;
   ! this also shows that the writes into field_out come back to Fortran.
   subroutine emit_diffusion_check(name, rc, rc_ok, fin, fout)
      character(*), intent(in) :: name
      integer, intent(in) :: rc, rc_ok
      real(c_double), intent(in) :: fin(1 - halo:, 1 - halo:, :), fout(1 - halo:, 1 - halo:, :)
      real(c_double), allocatable :: fref(:, :, :)
      real(real64) :: maxdiff
      allocate (fref, mold=fin)
      fref = -7.0_c_double
      fref(1:dnx, 1:dny, :) = fin(1:dnx, 1:dny, :) + alpha*( &
                              fin(0:dnx - 1, 1:dny, :) + fin(2:dnx + 1, 1:dny, :) + &
                              fin(1:dnx, 0:dny - 1, :) + fin(1:dnx, 2:dny + 1, :) - &
                              4.0_c_double*fin(1:dnx, 1:dny, :))
      maxdiff = maxval(abs(fout - fref))
      write (u, '(a,1x,i0)') "cases."//name//".check_rc", rc
      write (u, '(a,1x,g0)') "cases."//name//".max_abs_diff_vs_fortran", maxdiff
      write (u, '(a,1x,l1)') "cases."//name//".result_ok", (rc == rc_ok .and. maxdiff < 1.0e-12_real64)
      write (u, '(a,3(1x,i0))') "cases."//name//".shape_with_halo", shape(fin)
      write (u, '(a,1x,i0)') "cases."//name//".halo", halo
   end subroutine emit_diffusion_check

end module bench_harness
