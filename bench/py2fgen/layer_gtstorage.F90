! Call layer: our bridge, libgtstorage_python (modules gtstorage + gtstorage_python).
!
! Same contract as layer_py2fgen.F90 (module `bench_layer`, see the comment there), so
! bench_driver.F90 runs unchanged: bridge_empty_1/10/40, bridge_diffusion, bridge_probe,
! bridge_fail, layer_name, layer_ok.
!
! This is the "same call site as py2fgen" mode: the arrays are passed at every call and this
! layer does, per call,
!   gtstorage_wrap (one storage per array)  ->  gtstorage_python_call  ->  gtstorage_release.
! On the first call it starts the interpreter (gtstorage_python_init) and resolves the six
! functions of bench_functions_gtstorage.py once; the handles are kept (save).  The intended
! model usage -- wrap once, call every step with the same handles -- is bench_persistent.F90.
!
! No copies: every array dummy here is assumed-shape WITHOUT `contiguous`, and
! gtstorage_wrap's dummy is assumed-rank (type(*)/real, a(..)): gfortran passes the descriptor
! of whatever the caller passed (a non-contiguous section included) and the library records
! its address and byte strides.  The probe checks that Python sees the caller's address
! (probe.*.copied = F).
!
! Environment (read on the first call):
!   BENCH_GTSTORAGE_SYS_PATH  ':'-separated directories put first on sys.path (where the
!                             gtstorage package and bench_functions_gtstorage.py are);
!                             unset: PYTHONPATH alone
!   VIRTUAL_ENV               the venv (Python 3.12.1, NumPy) whose site-packages are used
module bench_layer
   use, intrinsic :: iso_c_binding
   use, intrinsic :: iso_fortran_env, only: error_unit
   use gtstorage, only: gtstorage_wrap, gtstorage_release, gtstorage_last_error, &
                        gtstorage_status_name, gtstorage_handle_kind, &
                        GTSTORAGE_OK, GTSTORAGE_NULL_HANDLE
   use gtstorage_python, only: gtstorage_python_init, gtstorage_python_resolve, &
                               gtstorage_python_call, gtstorage_python_function_kind, &
                               gtstorage_python_value, py_real, py_logical
   implicit none
#include "bench_layer_contract.inc"
   ! bench_persistent.F90 starts the interpreter the same way
   public :: init_python_from_environment

   character(*), parameter :: layer_name = "gtstorage"
   ! rc = the gtstorage status: 0 (GTSTORAGE_OK) on success, GTSTORAGE_ERROR_PYTHON (or the
   ! status of a gtstorage exception / GTSTORAGE_ERROR_INVALID_ARGUMENT for an argument that
   ! does not match the declaration) when Python fails; the message is written to stderr.
   integer, parameter :: layer_ok = GTSTORAGE_OK

   character(*), parameter :: py_module = "bench_functions_gtstorage"
   integer, parameter :: F_EMPTY_1 = 1, F_EMPTY_10 = 2, F_EMPTY_40 = 3, F_DIFFUSION = 4, &
                         F_PROBE = 5, F_FAIL = 6
   character(len=16), parameter :: fn_names(6) = [character(len=16) :: &
      "empty_1", "empty_10", "empty_40", "diffusion", "probe", "fail"]

   logical, save :: ready = .false.              ! init + resolve succeeded
   logical, save :: tried = .false.              ! init + resolve attempted (not retried)
   integer(c_int), save :: start_status = GTSTORAGE_OK
   integer(gtstorage_python_function_kind), save :: fn(6) = 0

contains

   ! ---- start-up: once per process --------------------------------------------------------
   ! The interpreter, with BENCH_GTSTORAGE_SYS_PATH (when set) first on sys.path.
   subroutine init_python_from_environment(st)
      integer, intent(out) :: st
      character(len=4096) :: path
      integer :: n
      call get_environment_variable("BENCH_GTSTORAGE_SYS_PATH", path, n)
      if (n > 0) then
         call gtstorage_python_init(sys_path=path(1:n), status=st)
      else
         call gtstorage_python_init(status=st)
      end if
   end subroutine init_python_from_environment

   ! True once the interpreter runs and the functions are resolved; rc is the start-up status.
   logical function started(rc)
      integer(c_int), intent(out) :: rc
      integer :: st, k
      rc = start_status
      started = ready
      if (tried) return
      tried = .true.
      call init_python_from_environment(st)
      if (st /= GTSTORAGE_OK) then
         call report("gtstorage_python_init", st)
      else
         do k = 1, size(fn)
            call gtstorage_python_resolve(fn(k), py_module//":"//trim(fn_names(k)), status=st)
            if (st /= GTSTORAGE_OK) then
               call report("gtstorage_python_resolve "//trim(fn_names(k)), st)
               exit
            end if
         end do
      end if
      start_status = int(st, c_int)
      ready = st == GTSTORAGE_OK
      rc = start_status
      started = ready
   end function started

   ! The message of the failed call (exception type, text, innermost frame) on stderr, as
   ! py2fgen logs its traceback; the caller gets the status in rc.
   subroutine report(what, st)
      character(*), intent(in) :: what
      integer, intent(in) :: st
      write (error_unit, '(a)') "bench_layer(gtstorage): "//what//" failed ["// &
         gtstorage_status_name(st)//"]: "//gtstorage_last_error()
   end subroutine report

   subroutine release_all(h)
      integer(gtstorage_handle_kind), intent(in) :: h(:)
      integer :: k, st
      do k = 1, size(h)
         if (h(k) /= GTSTORAGE_NULL_HANDLE) call gtstorage_release(h(k), status=st)
      end do
   end subroutine release_all

   ! Calls function f with the storages h (wrapped with statuses sw) and releases them:
   ! rc is the first failed wrap's status, else the call's.
   subroutine call_and_release(f, h, sw, rc, args)
      integer, intent(in) :: f
      integer(gtstorage_handle_kind), intent(in) :: h(:)
      integer, intent(in) :: sw(:)
      integer(c_int), intent(out) :: rc
      type(gtstorage_python_value), intent(in), optional :: args(:)
      integer :: k, st
      if (any(sw /= GTSTORAGE_OK)) then
         k = findloc(sw /= GTSTORAGE_OK, .true., dim=1)
         call report("gtstorage_wrap", sw(k))
         st = sw(k)
      else
         call gtstorage_python_call(fn(f), h, status=st, args=args)
         if (st /= GTSTORAGE_OK) call report(trim(fn_names(f)), st)
      end if
      call release_all(h)
      rc = int(st, c_int)
   end subroutine call_and_release

   ! Function f on one array (empty_1, fail).
   subroutine call_with_one(f, a, rc)
      integer, intent(in) :: f
      real(c_double), target, intent(inout) :: a(:, :, :)
      integer(c_int), intent(out) :: rc
      integer(gtstorage_handle_kind) :: h(1)
      integer :: sw(1)
      if (.not. started(rc)) return
      call gtstorage_wrap(h(1), a, status=sw(1))
      call call_and_release(f, h, sw, rc)
   end subroutine call_with_one

   ! Wraps ten arrays into h(1:10) (statuses sw(1:10)); the dummies pass the caller's
   ! descriptors on, so nothing is copied.
   subroutine wrap_10(h, sw, a00, a01, a02, a03, a04, a05, a06, a07, a08, a09)
      integer(gtstorage_handle_kind), intent(out) :: h(10)
      integer, intent(out) :: sw(10)
      real(c_double), target, intent(inout) :: a00(:, :, :), a01(:, :, :), a02(:, :, :), a03(:, :, :), a04(:, :, :)
      real(c_double), target, intent(inout) :: a05(:, :, :), a06(:, :, :), a07(:, :, :), a08(:, :, :), a09(:, :, :)
      call gtstorage_wrap(h(1), a00, status=sw(1))
      call gtstorage_wrap(h(2), a01, status=sw(2))
      call gtstorage_wrap(h(3), a02, status=sw(3))
      call gtstorage_wrap(h(4), a03, status=sw(4))
      call gtstorage_wrap(h(5), a04, status=sw(5))
      call gtstorage_wrap(h(6), a05, status=sw(6))
      call gtstorage_wrap(h(7), a06, status=sw(7))
      call gtstorage_wrap(h(8), a07, status=sw(8))
      call gtstorage_wrap(h(9), a08, status=sw(9))
      call gtstorage_wrap(h(10), a09, status=sw(10))
   end subroutine wrap_10

   ! ---- the contract ------------------------------------------------------------------------
   subroutine bridge_empty_1(a00, rc)
      real(c_double), target, intent(inout) :: a00(:, :, :)
      integer(c_int), intent(out) :: rc
      call call_with_one(F_EMPTY_1, a00, rc)
   end subroutine bridge_empty_1

   subroutine bridge_empty_10(a00, a01, a02, a03, a04, a05, a06, a07, &
                             a08, a09, rc)
      real(c_double), target, intent(inout) :: a00(:, :, :), a01(:, :, :), a02(:, :, :), a03(:, :, :), a04(:, :, :)
      real(c_double), target, intent(inout) :: a05(:, :, :), a06(:, :, :), a07(:, :, :), a08(:, :, :), a09(:, :, :)
      integer(c_int), intent(out) :: rc
      integer(gtstorage_handle_kind) :: h(10)
      integer :: sw(10)
      if (.not. started(rc)) return
      call wrap_10(h, sw, a00, a01, a02, a03, a04, a05, a06, a07, a08, a09)
      call call_and_release(F_EMPTY_10, h, sw, rc)
   end subroutine bridge_empty_10

   subroutine bridge_empty_40(a00, a01, a02, a03, a04, a05, a06, a07, &
                             a08, a09, a10, a11, a12, a13, a14, a15, &
                             a16, a17, a18, a19, a20, a21, a22, a23, &
                             a24, a25, a26, a27, a28, a29, a30, a31, &
                             a32, a33, a34, a35, a36, a37, a38, a39, rc)
      real(c_double), target, intent(inout) :: a00(:, :, :), a01(:, :, :), a02(:, :, :), a03(:, :, :), a04(:, :, :)
      real(c_double), target, intent(inout) :: a05(:, :, :), a06(:, :, :), a07(:, :, :), a08(:, :, :), a09(:, :, :)
      real(c_double), target, intent(inout) :: a10(:, :, :), a11(:, :, :), a12(:, :, :), a13(:, :, :), a14(:, :, :)
      real(c_double), target, intent(inout) :: a15(:, :, :), a16(:, :, :), a17(:, :, :), a18(:, :, :), a19(:, :, :)
      real(c_double), target, intent(inout) :: a20(:, :, :), a21(:, :, :), a22(:, :, :), a23(:, :, :), a24(:, :, :)
      real(c_double), target, intent(inout) :: a25(:, :, :), a26(:, :, :), a27(:, :, :), a28(:, :, :), a29(:, :, :)
      real(c_double), target, intent(inout) :: a30(:, :, :), a31(:, :, :), a32(:, :, :), a33(:, :, :), a34(:, :, :)
      real(c_double), target, intent(inout) :: a35(:, :, :), a36(:, :, :), a37(:, :, :), a38(:, :, :), a39(:, :, :)
      integer(c_int), intent(out) :: rc
      integer(gtstorage_handle_kind) :: h(40)
      integer :: sw(40)
      if (.not. started(rc)) return
      call wrap_10(h(1:10), sw(1:10), a00, a01, a02, a03, a04, a05, a06, a07, a08, a09)
      call wrap_10(h(11:20), sw(11:20), a10, a11, a12, a13, a14, a15, a16, a17, a18, a19)
      call wrap_10(h(21:30), sw(21:30), a20, a21, a22, a23, a24, a25, a26, a27, a28, a29)
      call wrap_10(h(31:40), sw(31:40), a30, a31, a32, a33, a34, a35, a36, a37, a38, a39)
      call call_and_release(F_EMPTY_40, h, sw, rc)
   end subroutine bridge_empty_40

   ! The halo travels as the storages' halo (halo=[h, h, 0]): Python reads it from the storage.
   subroutine bridge_diffusion(field_in, field_out, alpha, halo, rc)
      real(c_double), target, intent(inout) :: field_in(:, :, :), field_out(:, :, :)
      real(c_double), intent(in) :: alpha
      integer(c_int), intent(in) :: halo
      integer(c_int), intent(out) :: rc
      integer(gtstorage_handle_kind) :: h(2)
      integer :: sw(2)
      if (.not. started(rc)) return
      call gtstorage_wrap(h(1), field_in, halo=[int(halo), int(halo), 0], status=sw(1))
      call gtstorage_wrap(h(2), field_out, halo=[int(halo), int(halo), 0], status=sw(2))
      call call_and_release(F_DIFFUSION, h, sw, rc, [py_real("alpha", alpha)])
   end subroutine bridge_diffusion

   ! flag is a logical(c_bool) byte; any non-zero byte (gfortran's 1, NVHPC's 0xFF) is .true.
   ! (tested on the byte: gfortran assumes 0/1 for logical values).
   subroutine bridge_probe(a, info, flag, rc)
      real(c_double), target, intent(inout) :: a(:, :, :)
      integer(c_long), target, intent(inout) :: info(:)
      logical(c_bool), intent(in) :: flag
      integer(c_int), intent(out) :: rc
      integer(gtstorage_handle_kind) :: h(2)
      integer :: sw(2)
      logical :: on
      if (.not. started(rc)) return
      on = transfer(flag, 0_c_int8_t) /= 0_c_int8_t
      call gtstorage_wrap(h(1), a, status=sw(1))
      call gtstorage_wrap(h(2), info, status=sw(2))
      call call_and_release(F_PROBE, h, sw, rc, [py_logical("flag", on)])
   end subroutine bridge_probe

   subroutine bridge_fail(a, rc)
      real(c_double), target, intent(inout) :: a(:, :, :)
      integer(c_int), intent(out) :: rc
      call call_with_one(F_FAIL, a, rc)
   end subroutine bridge_fail

end module bench_layer
