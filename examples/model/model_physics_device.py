"""The device step of the mini-model for the OpenACC driver (model_acc.f90): the horizontal
diffusion of model_physics.py written with CuPy, on the model's device arrays (OpenACC's
device copies, wrapped with gtstorage_wrap_device), queued on the model's CUDA stream. It needs
CuPy and a GPU; it does not need GT4Py."""

from gtstorage import bridge


@bridge.export(bridge.Arg("u", dtype="float64", dims="IJK", side="device", readonly=True),
               bridge.Arg("out", dtype="float64", dims="IJK", side="device"),
               form="storage")
def diffuse_device(u, out, *, alpha: float):
    """The same step with CuPy on the device buffers (an OpenACC model's device copies): the
    bridge runs the call inside cupy.cuda.ExternalStream(the storages' stream), so the kernels
    below are queued after the model's, with no synchronization."""
    import cupy

    a, b = cupy.asarray(u), cupy.asarray(out)
    (il, ih), (jl, jh), _ = u.halo
    ni, nj = a.shape[0] - ih, a.shape[1] - jh
    c = a[il:ni, jl:nj]
    b[il:ni, jl:nj] = c + alpha * ((((a[il - 1:ni - 1, jl:nj] + a[il + 1:ni + 1, jl:nj])
                                     + a[il:ni, jl - 1:nj - 1]) + a[il:ni, jl + 1:nj + 1])
                                   - 4.0 * c)


