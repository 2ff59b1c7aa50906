/* gtstorage._native: the optional fast path of the Python binding (a CPython extension in C).
 *
 * It makes the two C calls of a small allocation (create, interface) and builds the NumPy array
 * directly, without the ctypes layers. It is optional: the package works without it (and
 * GTSTORAGE_PY_NATIVE=0 disables it); gtstorage/_capi.py exposes it as `_capi.native`.
 *
 *   create_array(options_address: int) -> numpy.ndarray | int
 *       gtstorage_create((const gtstorage_create_options *)options_address, &h) with the GIL
 *       released. On failure: the negative status as an int (this thread's gtstorage_last_error()
 *       holds the message). On success: a NumPy array over the host buffer whose base is an Owner
 *       holding the one reference of h. A storage without a host side is released and
 *       GTSTORAGE_ERROR_NO_SUCH_BUFFER (-5) is returned.
 *   host_array(handle: int) -> numpy.ndarray | int
 *       Takes over one reference of `handle` (the caller retained it) and returns the same kind of
 *       array. On failure the reference is released and the negative status is returned.
 *   allocation_of(array) -> Allocation | None
 *       (allocation address, allocation bytes, byte offset, (DLPack device type, id), handle,
 *       owner) of an array over an Owner's memory, read from what the Owner recorded (no
 *       library call), as an instance of the tuple subclass given to set_allocation_type().
 *   library_address() -> int
 *       The address of gtstorage_create as this module sees it, so that the binding can check
 *       that the module and ctypes use the same loaded libgtstorage.
 *   allocator(fallback, cache, init) -> Allocator
 *       gtstorage.empty/zeros/ones (gtstorage/_gt4py.py installs them): a callable that serves
 *       the common call (a shape tuple of ints, dtype, backend) from the options that the Python
 *       function `fallback` cached in the dict `cache`, and calls `fallback` for everything else.
 *       It carries the function's name, doc and signature (see "Allocator" below).
 *   Owner: owns one reference of a handle, released in its dealloc; read-only `handle`,
 *       weak-referenceable; not constructible from Python.
 *
 * Built against NumPy 2.x headers with NPY_TARGET_VERSION set to the 1.22 API (see
 * bindings/python/CMakeLists.txt), it imports on NumPy >= 1.22 and on 2.x. It uses only
 * functions of that API and no field of PyArray_Descr (whose layout changed in NumPy 2).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef NPY_NO_DEPRECATED_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#endif
#include <gtstorage/gtstorage.h>
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A new (strong) reference to @p object, for storing it (Py_NewRef of Python 3.10+). */
static inline PyObject* new_reference(PyObject* object) {
  Py_INCREF(object);
  return object;
}

/* ---------------------------------------------------------------------------------------------
 * Owner: the array's base object, holding one reference of a storage handle. */

typedef struct {
  PyObject_HEAD gtstorage_handle handle;
  PyObject* weakreflist;
  /* The host allocation behind the array, recorded when the Owner is made (from the same
     gtstorage_interface call) so that allocation_of() needs no library call. */
  void* allocation;
  int64_t allocation_bytes;
  int32_t device_type; /* DLPack device type and id of that memory */
  int32_t device_id;
} OwnerObject;

static void owner_dealloc(OwnerObject* self) {
  if (self->weakreflist != NULL) PyObject_ClearWeakRefs((PyObject*)self);
  if (self->handle != 0) {
    /* Releasing a valid reference cannot fail; a destructor must not raise anyway. */
    (void)gtstorage_release(self->handle);
    self->handle = 0;
  }
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* owner_repr(OwnerObject* self) {
  char text[64];
  snprintf(text, sizeof text, "<gtstorage._native.Owner handle=0x%llx>",
           (unsigned long long)self->handle);
  return PyUnicode_FromString(text);
}

static PyMemberDef owner_members[] = {
    {"handle", T_ULONGLONG, offsetof(OwnerObject, handle), READONLY,
     "The storage handle whose reference this object owns."},
    {NULL, 0, 0, 0, NULL}};

/* The start of the initializer of each type of this module: its name (in gtstorage._native),
   its object struct and destructor (PyVarObject_HEAD_INIT expands to "{...},"). */
/* clang-format off */
#define NATIVE_TYPE_HEAD(name, object, dealloc) \
  PyVarObject_HEAD_INIT(NULL, 0)                \
  .tp_name = "gtstorage._native." name,         \
  .tp_basicsize = sizeof(object),               \
  .tp_itemsize = 0,                             \
  .tp_dealloc = (destructor)(dealloc)
/* clang-format on */

static PyTypeObject OwnerType = {
    NATIVE_TYPE_HEAD("Owner", OwnerObject, owner_dealloc),
    .tp_repr = (reprfunc)owner_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "Owns one reference of a gtstorage handle (released when this object dies); "
        "the base object of the arrays made by gtstorage._native.",
    .tp_weaklistoffset = offsetof(OwnerObject, weakreflist),
    .tp_members = owner_members,
    /* no tp_new: only this module makes Owners */
};

/* ---------------------------------------------------------------------------------------------
 * dtype objects, cached per typestr (the GIL protects the cache). */

#define DTYPE_CACHE_SIZE 32
typedef struct {
  char typestr[GTSTORAGE_TYPESTR_SIZE + 1];
  PyArray_Descr* descr; /* strong reference */
} dtype_entry;
static dtype_entry dtype_cache[DTYPE_CACHE_SIZE];
static int dtype_cache_used = 0;

/* A new reference to the dtype of @p typestr (at most GTSTORAGE_TYPESTR_SIZE characters). */
static PyArray_Descr* dtype_for(const char* typestr) {
  char key[GTSTORAGE_TYPESTR_SIZE + 1];
  memset(key, 0, sizeof key);
  size_t n = strnlen(typestr, GTSTORAGE_TYPESTR_SIZE);
  memcpy(key, typestr, n);
  for (int i = 0; i < dtype_cache_used; ++i) {
    if (memcmp(dtype_cache[i].typestr, key, sizeof key) == 0) {
      Py_INCREF(dtype_cache[i].descr);
      return dtype_cache[i].descr;
    }
  }
  PyObject* name = PyUnicode_FromStringAndSize(key, (Py_ssize_t)n);
  if (name == NULL) return NULL;
  PyArray_Descr* descr = NULL;
  int ok = PyArray_DescrConverter(name, &descr);
  Py_DECREF(name);
  if (!ok || descr == NULL) return NULL;
  if (dtype_cache_used < DTYPE_CACHE_SIZE) {
    memcpy(dtype_cache[dtype_cache_used].typestr, key, sizeof key);
    Py_INCREF(descr);
    dtype_cache[dtype_cache_used].descr = descr;
    ++dtype_cache_used;
  }
  return descr;
}

/* ---------------------------------------------------------------------------------------------
 * The array over the host side of @p h, which owns one reference of h. Consumes that reference
 * in every case. Returns the array, or a negative status as a Python int (the reference then
 * released), or NULL with a Python exception set (the reference released). */
static PyObject* array_from_owned_handle(gtstorage_handle h) {
  gtstorage_interface_info info;
  info.struct_size = (uint32_t)sizeof info;
  int st = gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info);
  if (st != GTSTORAGE_OK) {
    /* NO_SUCH_BUFFER: a device-only storage, which the caller handles through ctypes; it maps any
       other status (an invalid handle's release below fails again with the same kind of error). */
    (void)gtstorage_release(h);
    return PyLong_FromLong(st);
  }

  OwnerObject* owner = PyObject_New(OwnerObject, &OwnerType);
  if (owner == NULL) {
    (void)gtstorage_release(h);
    return NULL;
  }
  owner->handle = h;
  owner->weakreflist = NULL;
  owner->allocation = info.allocation;
  owner->allocation_bytes = info.allocation_bytes;
  owner->device_type = info.device_type;
  owner->device_id = info.device_id;

  PyArray_Descr* descr = dtype_for(info.typestr);
  if (descr == NULL) {
    Py_DECREF(owner); /* releases h */
    return NULL;
  }
  const int nd = (int)info.ndim;
  npy_intp dims[GTSTORAGE_MAX_NDIM], strides[GTSTORAGE_MAX_NDIM];
  for (int d = 0; d < nd && d < GTSTORAGE_MAX_NDIM; ++d) {
    dims[d] = (npy_intp)info.shape[d];
    strides[d] = (npy_intp)info.strides[d];
  }
  /* NumPy derives the contiguity and ALIGNED flags from data and strides; only WRITEABLE comes
     from here. PyArray_NewFromDescr steals the descr reference. */
  const int flags = info.readonly ? 0 : NPY_ARRAY_WRITEABLE;
  PyObject* arr =
      PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides, info.data, flags, NULL);
  if (arr == NULL) {
    Py_DECREF(owner);
    return NULL;
  }
  if (PyArray_SetBaseObject((PyArrayObject*)arr, (PyObject*)owner) < 0) { /* steals owner */
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}

static int handle_from_pyobject(PyObject* obj, uint64_t* out) {
  unsigned long long v = PyLong_AsUnsignedLongLong(obj);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  *out = (uint64_t)v;
  return 0;
}

/* ---- Module functions. ------------------------------------------------------------------- */

PyDoc_STRVAR(create_array_doc,
             "create_array(options_address, /)\n--\n\n"
             "gtstorage_create() from the gtstorage_create_options at options_address (GIL "
             "released), then an ndarray over the host buffer whose base is an Owner of the "
             "handle. Returns the negative status instead on failure (see gtstorage_last_error), "
             "and GTSTORAGE_ERROR_NO_SUCH_BUFFER for a storage without a host side (released).");

static PyObject* native_create_array(PyObject* module, PyObject* arg) {
  (void)module;
  void* address = PyLong_AsVoidPtr(arg);
  if (address == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "options_address is NULL");
    return NULL;
  }
  const gtstorage_create_options* options = (const gtstorage_create_options*)address;
  gtstorage_handle h = 0;
  int st;
  Py_BEGIN_ALLOW_THREADS st = gtstorage_create(options, &h);
  Py_END_ALLOW_THREADS if (st != GTSTORAGE_OK) return PyLong_FromLong(st);
  return array_from_owned_handle(h);
}

PyDoc_STRVAR(host_array_doc,
             "host_array(handle, /)\n--\n\n"
             "Takes over one reference of handle (retain it first) and returns an ndarray over "
             "its host buffer whose base is an Owner of that reference. On failure the reference "
             "is released and the negative status is returned.");

static PyObject* native_host_array(PyObject* module, PyObject* arg) {
  (void)module;
  uint64_t h;
  if (handle_from_pyobject(arg, &h) < 0) return NULL;
  return array_from_owned_handle((gtstorage_handle)h);
}

PyDoc_STRVAR(allocation_of_doc,
             "allocation_of(array, /)\n--\n\n"
             "For a NumPy array whose memory an Owner of this module holds (the array, or a view "
             "of it: its base chain ends in the Owner): (allocation address, allocation bytes, "
             "byte offset of the array's data, (DLPack device type, device id), handle, owner) "
             "as the type set_allocation_type() gave (a tuple before). None for anything "
             "else.");

/* gtstorage.Allocation (a tuple subclass), set by the binding; NULL: plain tuples. */
static PyObject* allocation_type = NULL;

static PyObject* native_allocation_of(PyObject* module, PyObject* arg) {
  (void)module;
  if (!PyArray_Check(arg)) Py_RETURN_NONE;
  PyObject* base = PyArray_BASE((PyArrayObject*)arg);
  /* Views keep the array they were made from as base (NumPy collapses chains of views to the
     array that owns the memory, whose base is the Owner). */
  while (base != NULL && PyArray_Check(base)) base = PyArray_BASE((PyArrayObject*)base);
  if (base == NULL || Py_TYPE(base) != &OwnerType) Py_RETURN_NONE;
  const OwnerObject* owner = (const OwnerObject*)base;
  const char* data = (const char*)PyArray_DATA((PyArrayObject*)arg);
  const long long offset = (long long)(data - (const char*)owner->allocation);
  PyObject* items =
      Py_BuildValue("(KLL(ii)KO)", (unsigned long long)(uintptr_t)owner->allocation,
                    (long long)owner->allocation_bytes, offset, (int)owner->device_type,
                    (int)owner->device_id, (unsigned long long)owner->handle, base);
  if (items == NULL || allocation_type == NULL) return items;
  PyObject* record = PyObject_CallOneArg(allocation_type, items);
  Py_DECREF(items);
  return record;
}

PyDoc_STRVAR(set_allocation_type_doc,
             "set_allocation_type(cls, /)\n--\n\n"
             "The tuple subclass allocation_of() returns (called with the tuple of items).");

static PyObject* native_set_allocation_type(PyObject* module, PyObject* arg) {
  (void)module;
  if (!PyType_Check(arg) || !PyType_IsSubtype((PyTypeObject*)arg, &PyTuple_Type)) {
    PyErr_SetString(PyExc_TypeError, "set_allocation_type: a tuple subclass is needed");
    return NULL;
  }
  Py_INCREF(arg);
  Py_XSETREF(allocation_type, arg);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(library_address_doc,
             "library_address()\n--\n\n"
             "Address of gtstorage_create in the libgtstorage this module is linked to.");

static PyObject* native_library_address(PyObject* module, PyObject* noargs) {
  (void)module;
  (void)noargs;
  return PyLong_FromVoidPtr((void*)(uintptr_t)&gtstorage_create);
}

/* ---------------------------------------------------------------------------------------------
 * Allocator: gtstorage.empty/zeros/ones without the Python layers on the common call.
 *
 * allocator(fallback, cache, init) wraps the Python allocator `fallback` (gtstorage._gt4py.zeros
 * & co., signature (shape, dtype=<default>, *, backend=<default>, ...)). A call with a shape
 * tuple of exact ints, optionally dtype (positional or keyword) and backend (keyword), and
 * nothing else looks up the key (init, shape, dtype, backend) in `cache` (gtstorage._request.cache,
 * which the fallback fills); a hit on a host entry (`device` false, `shape_types` all int) is
 * created here as create_array does. Every other call, a miss, a device entry and a library
 * error go to fallback(*args, **kwargs) unchanged, which fills the cache or raises the proper
 * exception. The Python side of the contract: an entry (a gtstorage._request.Request) has
 * `address` (of its gtstorage_create_options, valid while it lives), `device` and `shape_types`,
 * none of which changes once it is in the cache.
 *
 * A lookup is remembered by the identity of the (immutable) shape tuple, dtype and backend (a
 * loop passes the same constant tuple) and the version of the cache dict, which any change of
 * the dict bumps: its ma_version_tag (PEP 509) before Python 3.12, a dict watcher's counter
 * after. Both memos hold strong references, so the identities they compare cannot be reused. */

#define ALLOCATOR_MEMO_SIZE 16 /* a power of 2 */

/* What the allocator read from one cache entry (which it keeps alive). */
typedef struct {
  PyObject* entry; /* strong reference, or NULL */
  void* address;   /* its gtstorage_create_options */
} entry_memo;

/* The host entry that the key (init, shape, dtype, backend) found in the cache at `version`. */
typedef struct {
  PyObject* shape; /* strong references (NULL: an empty slot) */
  PyObject* dtype;
  PyObject* backend;
  PyObject* entry;
  void* address;
  uint64_t version;
} key_memo;

typedef struct {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* fallback;
  PyObject* cache;         /* a dict */
  PyObject* init;          /* the GTSTORAGE_INIT_* value, the first item of the keys */
  PyObject* default_dtype; /* the fallback's defaults */
  PyObject* default_backend;
  PyObject* shape_name; /* the fallback's parameter names ("shape", "dtype") */
  PyObject* dtype_name;
  PyObject* dict; /* __dict__: __name__, __doc__, __wrapped__, ... */
  PyObject* weakreflist;
  entry_memo entries[ALLOCATOR_MEMO_SIZE];
  key_memo keys[ALLOCATOR_MEMO_SIZE];
} AllocatorObject;

static PyObject* str_backend; /* "backend", interned */
static PyObject* str_address;
static PyObject* str_device;
static PyObject* str_shape_types;

#if PY_VERSION_HEX >= 0x030C0000
/* Bumped on every change of a cache dict (all allocators watch theirs). */
static uint64_t cache_generation = 1;
static int cache_watcher_id = -1;

static int cache_watcher(PyDict_WatchEvent event, PyObject* dict, PyObject* key,
                         PyObject* new_value) {
  (void)event;
  (void)dict;
  (void)key;
  (void)new_value;
  ++cache_generation;
  return 0;
}
#endif

/* Changes whenever the cache dict changes. */
static inline uint64_t cache_version(const AllocatorObject* self) {
#if PY_VERSION_HEX >= 0x030C0000
  (void)self;
  return cache_generation;
#else
  return ((PyDictObject*)self->cache)->ma_version_tag;
#endif
}

/* Whether @p name (a str) is @p expected (an interned str). */
static inline int name_is(PyObject* name, PyObject* expected) {
  if (name == expected) return 1;
  return PyUnicode_Compare(name, expected) == 0; /* both str: cannot fail */
}

/* The create_options address of cache entry @p entry for a shape of @p ndim exact ints, or NULL
 * when the entry is not one to create here (a device entry, other shape element types, not a
 * Request). Never leaves an exception set. */
static void* allocator_entry_address(AllocatorObject* self, PyObject* entry, Py_ssize_t ndim) {
  entry_memo* slot = &self->entries[((uintptr_t)entry >> 4) & (ALLOCATOR_MEMO_SIZE - 1)];
  if (slot->entry == entry) return slot->address;

  void* address = NULL;
  PyObject* device = PyObject_GetAttr(entry, str_device);
  PyObject* types = device != NULL ? PyObject_GetAttr(entry, str_shape_types) : NULL;
  PyObject* addr = types != NULL ? PyObject_GetAttr(entry, str_address) : NULL;
  if (addr != NULL && PyObject_Not(device) == 1 && PyTuple_Check(types) &&
      PyTuple_GET_SIZE(types) == ndim && PyLong_Check(addr)) {
    int ints = 1;
    for (Py_ssize_t i = 0; i < ndim; ++i)
      if (PyTuple_GET_ITEM(types, i) != (PyObject*)&PyLong_Type) ints = 0;
    if (ints) address = PyLong_AsVoidPtr(addr);
  }
  Py_XDECREF(device);
  Py_XDECREF(types);
  Py_XDECREF(addr);
  if (PyErr_Occurred()) PyErr_Clear();
  if (address == NULL) return NULL;

  PyObject* old = slot->entry;
  Py_INCREF(entry);
  slot->entry = entry;
  slot->address = address;
  Py_XDECREF(old);
  return address;
}

static inline key_memo* allocator_key_slot(AllocatorObject* self, PyObject* shape, PyObject* dtype,
                                           PyObject* backend) {
  uintptr_t h = ((uintptr_t)shape >> 4) ^ ((uintptr_t)dtype >> 6) ^ ((uintptr_t)backend >> 8);
  return &self->keys[h & (ALLOCATOR_MEMO_SIZE - 1)];
}

static void key_memo_set(key_memo* slot, PyObject* shape, PyObject* dtype, PyObject* backend,
                         PyObject* entry, void* address, uint64_t version) {
  key_memo old = *slot;
  slot->shape = new_reference(shape);
  slot->dtype = new_reference(dtype);
  slot->backend = new_reference(backend);
  slot->entry = new_reference(entry);
  slot->address = address;
  slot->version = version;
  Py_XDECREF(old.shape); /* last: a dealloc may run code */
  Py_XDECREF(old.dtype);
  Py_XDECREF(old.backend);
  Py_XDECREF(old.entry);
}

static PyObject* allocator_vectorcall(PyObject* callable, PyObject* const* args, size_t nargsf,
                                      PyObject* kwnames) {
  AllocatorObject* self = (AllocatorObject*)callable;
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject* shape = nargs >= 1 ? args[0] : NULL;
  PyObject* dtype = nargs >= 2 ? args[1] : NULL;
  PyObject* backend = NULL;
  if (self->fallback == NULL) { /* cleared by the cycle collector */
    PyErr_SetString(PyExc_RuntimeError, "gtstorage._native.Allocator: called after its cleanup");
    return NULL;
  }
  if (nargs > 2) goto fallback;
  if (kwnames != NULL) {
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; ++i) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, i);
      PyObject* value = args[nargs + i];
      if (backend == NULL && name_is(name, str_backend))
        backend = value;
      else if (dtype == NULL && name_is(name, self->dtype_name))
        dtype = value;
      else if (shape == NULL && name_is(name, self->shape_name))
        shape = value;
      else
        goto fallback; /* another argument, or one given twice */
    }
  }
  if (shape == NULL) goto fallback;
  if (dtype == NULL) dtype = self->default_dtype;
  if (backend == NULL) backend = self->default_backend;

  {
    PyObject* entry;
    void* address;
    const uint64_t version = cache_version(self);
    key_memo* memo = allocator_key_slot(self, shape, dtype, backend);
    if (memo->shape == shape && memo->dtype == dtype && memo->backend == backend &&
        memo->version == version) {
      /* The same objects as a call since which the cache has not changed: the same entry (a
         tuple of exact ints cannot change). */
      entry = memo->entry;
      address = memo->address;
      Py_INCREF(entry);
    } else {
      if (!PyTuple_CheckExact(shape)) goto fallback;
      const Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
      for (Py_ssize_t i = 0; i < ndim; ++i)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(shape, i))) goto fallback;
      PyObject* key = PyTuple_Pack(4, self->init, shape, dtype, backend);
      if (key == NULL) return NULL;
      entry = PyDict_GetItemWithError(self->cache, key); /* borrowed */
      Py_DECREF(key);
      if (entry == NULL) {
        PyErr_Clear(); /* a miss, or an unhashable argument: the fallback says what is wrong */
        goto fallback;
      }
      Py_INCREF(entry); /* the options must outlive the create (another thread may clear cache) */
      address = allocator_entry_address(self, entry, ndim);
      if (address == NULL) {
        Py_DECREF(entry);
        goto fallback;
      }
      /* Only when the lookup itself (hash and __eq__ of the arguments) changed nothing. */
      if (cache_version(self) == version)
        key_memo_set(memo, shape, dtype, backend, entry, address, version);
    }
    gtstorage_handle h = 0;
    int st;
    Py_BEGIN_ALLOW_THREADS st = gtstorage_create((const gtstorage_create_options*)address, &h);
    Py_END_ALLOW_THREADS Py_DECREF(entry);
    if (st != GTSTORAGE_OK) goto fallback; /* the fallback raises the proper exception */
    PyObject* arr = array_from_owned_handle(h);
    if (arr == NULL || !PyLong_CheckExact(arr)) return arr;
    Py_DECREF(arr); /* a status (the handle is released): the fallback maps it */
  }
fallback:
  return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* The references of an allocator that the garbage collector follows: what traverse visits
   and clear drops (F is Py_VISIT or Py_CLEAR). */
#define ALLOCATOR_FOR_EACH_REFERENCE(F)             \
  do {                                              \
    F(self->fallback);                              \
    F(self->cache);                                 \
    F(self->init);                                  \
    F(self->default_dtype);                         \
    F(self->default_backend);                       \
    F(self->dict);                                  \
    for (int i = 0; i < ALLOCATOR_MEMO_SIZE; ++i) { \
      F(self->entries[i].entry);                    \
      F(self->keys[i].shape);                       \
      F(self->keys[i].dtype);                       \
      F(self->keys[i].backend);                     \
      F(self->keys[i].entry);                       \
    }                                               \
  } while (0)

static int allocator_traverse(AllocatorObject* self, visitproc visit, void* arg) {
  ALLOCATOR_FOR_EACH_REFERENCE(Py_VISIT);
  return 0;
}

static int allocator_clear(AllocatorObject* self) {
  ALLOCATOR_FOR_EACH_REFERENCE(Py_CLEAR);
  Py_CLEAR(self->shape_name); /* (strings: nothing for the collector to follow) */
  Py_CLEAR(self->dtype_name);
  return 0;
}

static void allocator_dealloc(AllocatorObject* self) {
  PyObject_GC_UnTrack(self);
  if (self->weakreflist != NULL) PyObject_ClearWeakRefs((PyObject*)self);
  (void)allocator_clear(self);
  PyObject_GC_Del(self);
}

/* The fallback's repr with a note: "<function zeros at 0x... (gtstorage._native.Allocator)>". */
static PyObject* allocator_repr(AllocatorObject* self) {
  if (self->fallback == NULL) return PyUnicode_FromString("<gtstorage._native.Allocator>");
  PyObject* inner = PyObject_Repr(self->fallback);
  if (inner == NULL) return NULL;
  PyObject* result;
  const Py_ssize_t n = PyUnicode_GET_LENGTH(inner);
  if (n >= 2 && PyUnicode_READ_CHAR(inner, 0) == '<' && PyUnicode_READ_CHAR(inner, n - 1) == '>') {
    PyObject* head = PyUnicode_Substring(inner, 0, n - 1);
    result = head != NULL ? PyUnicode_FromFormat("%U (gtstorage._native.Allocator)>", head) : NULL;
    Py_XDECREF(head);
  } else {
    result = PyUnicode_FromFormat("<gtstorage._native.Allocator of %U>", inner);
  }
  Py_DECREF(inner);
  return result;
}

/* Pickled (and copied, deep-copied) by reference like a function: module.qualname. */
static PyObject* allocator_reduce(PyObject* self, PyObject* noargs) {
  (void)noargs;
  return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef allocator_methods[] = {{"__reduce__", allocator_reduce, METH_NOARGS, NULL},
                                          {NULL, NULL, 0, NULL}};

/* Like a function: bound as a method when found on a class (and a routine for inspect/pydoc). */
static PyObject* allocator_descr_get(PyObject* self, PyObject* obj, PyObject* type) {
  (void)type;
  if (obj == NULL || obj == Py_None) {
    Py_INCREF(self);
    return self;
  }
  return PyMethod_New(self, obj);
}

static PyGetSetDef allocator_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject AllocatorType = {
    NATIVE_TYPE_HEAD("Allocator", AllocatorObject, allocator_dealloc),
    .tp_vectorcall_offset = offsetof(AllocatorObject, vectorcall),
    .tp_repr = (reprfunc)allocator_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc =
        "A GT4Py drop-in allocator (gtstorage.empty/zeros/ones) whose common calls are "
        "served in C; see gtstorage._native.allocator. Its __doc__, __name__ and "
        "signature (__wrapped__) are those of the Python function it wraps.",
    .tp_traverse = (traverseproc)allocator_traverse,
    .tp_clear = (inquiry)allocator_clear,
    .tp_weaklistoffset = offsetof(AllocatorObject, weakreflist),
    .tp_methods = allocator_methods,
    .tp_getset = allocator_getset,
    .tp_descr_get = allocator_descr_get,
    .tp_dictoffset = offsetof(AllocatorObject, dict),
    /* no tp_new: only allocator() makes them */
};

/* The name of positional parameter @p i of code object @p code (a new reference). */
static PyObject* code_varname(PyObject* code, Py_ssize_t i) {
  PyObject* names = PyObject_GetAttrString(code, "co_varnames");
  if (names == NULL) return NULL;
  PyObject* name = NULL;
  if (PyTuple_Check(names) && i < PyTuple_GET_SIZE(names)) {
    name = PyTuple_GET_ITEM(names, i);
    Py_INCREF(name);
  } else {
    PyErr_SetString(PyExc_TypeError, "allocator: unexpected co_varnames of the fallback");
  }
  Py_DECREF(names);
  return name;
}

PyDoc_STRVAR(allocator_doc,
             "allocator(fallback, cache, init, /)\n--\n\n"
             "A callable that serves fallback(shape[, dtype][, dtype=][, backend=]) calls with a "
             "tuple of ints as shape from the prepared options in cache (the dict "
             "{(init, shape, dtype, backend): Request} that fallback fills) and calls "
             "fallback(*args, **kwargs) for everything else. fallback must be a Python function "
             "with the signature (shape, dtype=..., *, backend=..., ...); the result carries its "
             "name, doc and signature (functools.update_wrapper).");

static PyObject* native_allocator(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 3) {
    PyErr_Format(PyExc_TypeError, "allocator() takes 3 arguments (%zd given)", nargs);
    return NULL;
  }
  PyObject *fallback = args[0], *cache = args[1], *init = args[2];
  if (!PyFunction_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "allocator: fallback must be a Python function");
    return NULL;
  }
  if (!PyDict_CheckExact(cache)) {
    PyErr_SetString(PyExc_TypeError, "allocator: cache must be a dict");
    return NULL;
  }
  if (!PyLong_CheckExact(init)) {
    PyErr_SetString(PyExc_TypeError, "allocator: init must be an int");
    return NULL;
  }
  /* The fallback's signature: (shape, dtype=<default>, *, backend=<default>, ...). */
  PyObject* code = PyFunction_GetCode(fallback);         /* borrowed */
  PyObject* defaults = PyFunction_GetDefaults(fallback); /* borrowed, may be NULL */
  PyObject* kwdefaults = PyFunction_GetKwDefaults(fallback);
  long n = -1, posonly = -1;
  {
    PyObject* argcount = PyObject_GetAttrString(code, "co_argcount");
    PyObject* posonlycount =
        argcount != NULL ? PyObject_GetAttrString(code, "co_posonlyargcount") : NULL;
    if (posonlycount != NULL) {
      n = PyLong_AsLong(argcount);
      posonly = PyLong_AsLong(posonlycount);
    }
    Py_XDECREF(argcount);
    Py_XDECREF(posonlycount);
    if (PyErr_Occurred()) return NULL;
  }
  PyObject* default_backend = kwdefaults != NULL && PyDict_Check(kwdefaults)
                                  ? PyDict_GetItemWithError(kwdefaults, str_backend)
                                  : NULL;
  if (default_backend == NULL && PyErr_Occurred()) return NULL;
  if (n != 2 || posonly != 0 || defaults == NULL || !PyTuple_Check(defaults) ||
      PyTuple_GET_SIZE(defaults) != 1 || default_backend == NULL) {
    PyErr_SetString(PyExc_TypeError,
                    "allocator: fallback must have the signature "
                    "(shape, dtype=<default>, *, backend=<default>, ...)");
    return NULL;
  }

  AllocatorObject* self = PyObject_GC_New(AllocatorObject, &AllocatorType);
  if (self == NULL) return NULL;
  self->vectorcall = allocator_vectorcall;
  self->fallback = new_reference(fallback);
  self->cache = new_reference(cache);
  self->init = new_reference(init);
  self->default_dtype = new_reference(PyTuple_GET_ITEM(defaults, 0));
  self->default_backend = new_reference(default_backend);
  self->shape_name = NULL;
  self->dtype_name = NULL;
  self->dict = NULL;
  self->weakreflist = NULL;
  memset(self->entries, 0, sizeof self->entries);
  memset(self->keys, 0, sizeof self->keys);
  PyObject_GC_Track((PyObject*)self);
#if PY_VERSION_HEX >= 0x030C0000
  if (PyDict_Watch(cache_watcher_id, cache) < 0) goto fail;
#endif

  self->shape_name = code_varname(code, 0);
  self->dtype_name = self->shape_name != NULL ? code_varname(code, 1) : NULL;
  if (self->dtype_name == NULL) goto fail;
  if (!PyUnicode_CheckExact(self->shape_name) || !PyUnicode_CheckExact(self->dtype_name)) {
    PyErr_SetString(PyExc_TypeError, "allocator: unexpected parameter names of the fallback");
    goto fail;
  }
  /* __module__, __name__, __qualname__, __doc__, __annotations__, __dict__, __wrapped__. */
  {
    PyObject* functools = PyImport_ImportModule("functools");
    if (functools == NULL) goto fail;
    PyObject* r = PyObject_CallMethod(functools, "update_wrapper", "OO", (PyObject*)self, fallback);
    Py_DECREF(functools);
    if (r == NULL) goto fail;
    Py_DECREF(r);
  }
  return (PyObject*)self;
fail:
  Py_DECREF(self);
  return NULL;
}

static PyMethodDef native_methods[] = {
    {"create_array", native_create_array, METH_O, create_array_doc},
    {"host_array", native_host_array, METH_O, host_array_doc},
    {"library_address", native_library_address, METH_NOARGS, library_address_doc},
    {"allocation_of", native_allocation_of, METH_O, allocation_of_doc},
    {"set_allocation_type", native_set_allocation_type, METH_O, set_allocation_type_doc},
    {"allocator", (PyCFunction)(void (*)(void))native_allocator, METH_FASTCALL, allocator_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "gtstorage._native",
    "Native fast path of the gtstorage binding (optional; see gtstorage/_capi.py).",
    -1,
    native_methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__native(void) {
  import_array(); /* returns NULL with an ImportError set when NumPy is unusable */
  if (PyType_Ready(&OwnerType) < 0 || PyType_Ready(&AllocatorType) < 0) return NULL;
  str_backend = PyUnicode_InternFromString("backend");
  str_address = PyUnicode_InternFromString("address");
  str_device = PyUnicode_InternFromString("device");
  str_shape_types = PyUnicode_InternFromString("shape_types");
  if (str_backend == NULL || str_address == NULL || str_device == NULL || str_shape_types == NULL)
    return NULL;
#if PY_VERSION_HEX >= 0x030C0000
  cache_watcher_id = PyDict_AddWatcher(cache_watcher);
  if (cache_watcher_id < 0) return NULL;
#endif
  PyObject* m = PyModule_Create(&native_module);
  if (m == NULL) return NULL;
  Py_INCREF(&OwnerType);
  if (PyModule_AddObject(m, "Owner", (PyObject*)&OwnerType) < 0) {
    Py_DECREF(&OwnerType);
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(&AllocatorType);
  if (PyModule_AddObject(m, "Allocator", (PyObject*)&AllocatorType) < 0) {
    Py_DECREF(&AllocatorType);
    Py_DECREF(m);
    return NULL;
  }
  if (PyModule_AddIntConstant(m, "ERROR_NO_SUCH_BUFFER", GTSTORAGE_ERROR_NO_SUCH_BUFFER) < 0 ||
      PyModule_AddIntConstant(m, "HEADER_VERSION", GTSTORAGE_VERSION_NUMBER) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
