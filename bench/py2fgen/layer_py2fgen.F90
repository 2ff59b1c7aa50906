! Call layer: icon4py py2fgen (icon4py-tools 0.4.x).
!
! This is the ONLY Fortran file of the benchmark that knows about py2fgen.
! bench_driver.F90 uses module `bench_layer` and nothing else from the bridge.
!
! Contract that any call layer must provide (module name `bench_layer`):
!
!   character(*), parameter :: layer_name      ! written to the results
!   integer,      parameter :: layer_ok        ! value of rc meaning "success"
!   bridge_empty_1 (a00, rc)                   ! 1 array
!   bridge_empty_10(a00, ..., a09, rc)         ! 10 arrays
!   bridge_empty_40(a00, ..., a39, rc)         ! 40 arrays
!   bridge_diffusion(field_in, field_out, alpha, halo, rc)
!   bridge_probe(a, info, flag, rc)            ! see bench_functions.probe
!   bridge_fail(a, rc)                         ! the Python side raises
!
! with arrays real(c_double) rank 3 (info: integer(c_long) rank 1),
! alpha real(c_double), halo integer(c_int), flag logical(c_bool) and rc integer(c_int).
!
! IMPORTANT: the procedures are *renamed* (use-association), not wrapped.
! Wrapping them in a subroutine with plain assumed-shape dummies would add an
! extra copy: gfortran (checked with 12.2) always creates a temporary
! (copy-in/copy-out) when an assumed-shape dummy without the CONTIGUOUS
! attribute is passed on to a CONTIGUOUS dummy -- even if the data are
! contiguous at run time -- and py2fgen's generated dummies are CONTIGUOUS.
! The driver measures that effect explicitly (cases *_via_assumed_shape).
! A layer for another bridge may use wrapper subroutines, but should use
! CONTIGUOUS or assumed-shape dummies consistently with what its bridge needs.
module bench_layer
   use py2fgen_bench, only: bridge_empty_1 => empty_1, &
                            bridge_empty_10 => empty_10, &
                            bridge_empty_40 => empty_40, &
                            bridge_diffusion => diffusion, &
                            bridge_probe => probe, &
                            bridge_fail => fail
   implicit none
#include "bench_layer_contract.inc"

   character(*), parameter :: layer_name = "py2fgen"
   ! py2fgen rc convention (_codegen.py): 0 = embedding init failed,
   ! 1 = success, 2 = the Python function raised an exception
   integer, parameter :: layer_ok = 1
end module bench_layer
