/* _flashjit_fast: the per-call path of the Python package (flashjit._call.call) in C.
 *
 * One function, call(op, hdr, handle, tensors, *scalars), equivalent to the Python
 * flashjit._call.call: it fills a flashjit_packed_call on the C stack from PyTorch tensors
 * (data_ptr(), shape, stride(), get_device(), dtype looked up in _call._DTYPES), the scalars
 * (their slots described by _call._KINDS[hdr]), the handle (the default engine's when None)
 * and the current raw stream of the first CUDA tensor's device (_call._raw_stream), and calls
 * flashjit_call_packed with the GIL released (as ctypes does; a first call may compile).
 * A non-zero status goes to _lib.raise_error, which raises the same exception as the Python
 * path.
 *
 * Anything else (an object with __dlpack__, a tensor type not seen yet, a dtype not in
 * _DTYPES, more than 6 dims, a scalar or handle the Python path would refuse, an accessor
 * that raises, a package not initialised yet) makes the whole call go to the Python
 * implementation, before anything with an effect has happened (the stream query, the C call):
 * behaviour, messages and exception types are the Python path's by construction.
 *
 * PyTorch tensors (_call._Tensor, and registered subclasses that inherit the same API, such as
 * nn.Parameter) are read through the DLPack C exchange API when the tensor type offers one
 * (`__dlpack_c_exchange_api__`, or the older name
 * `__c_dlpack_exchange_api__`: a capsule "dlpack_exchange_api", DLPack >= 1.2): its
 * dltensor_from_py_object_no_sync fills a non-owning DLTensor in one C call instead of five
 * Python-level accessor calls. The first tensor of each type read that way is also read through
 * the accessors and the two records must agree field by field; otherwise, or when the API is
 * missing, older, raises, or FLASHJIT_PYTHON_DLPACK_API=0, the accessors stay in use.
 *
 * Written against the stable ABI (Py_LIMITED_API 3.11): one _flashjit_fast.abi3.so loads in
 * CPython 3.11 and later. No global mutable state: what init() gives is set once in the module
 * state; the argument block lives on the C stack of each call. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <flashjit/flashjit.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The DLPack C exchange API (DLPack >= 1.2), declared here: Debian's dlpack.h is older. Only
 * the layout up to dltensor_from_py_object_no_sync is relied on. */
typedef struct {
  uint32_t major, minor;
} dlpack_version;
typedef struct dlpack_exchange_header {
  dlpack_version version;
  struct dlpack_exchange_header* prev_api;
} dlpack_exchange_header;
typedef struct {
  dlpack_exchange_header header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  int (*dltensor_from_py_object_no_sync)(void* py_object, DLTensor* out);
  void* current_work_stream;
} dlpack_exchange_api;

enum { API_UNKNOWN = 0, API_OFF = -1, API_UNVERIFIED = 1, API_ON = 2 };
#define MAX_API_DTYPES 32
#define MAX_API_TYPES 8

typedef struct {
  PyObject* ns;       /* flashjit._call's globals: _ready, _Tensor, _tensor_types, ... */
  PyObject* fallback; /* flashjit._call._call_python */
  PyObject* raise_fn; /* flashjit._lib.raise_error */
  PyObject* kinds;    /* flashjit._call._KINDS: {header Struct: "d" * nf + i codes} */
  PyObject* engine;   /* the flashjit.engine module */
  PyObject* struct_error;
  PyObject* s_shape;
  PyObject* s_stride;
  PyObject* s_get_device;
  PyObject* s_data_ptr;
  PyObject* s_dtype;
  PyObject* s_default;
  PyObject* s_handle;
  PyObject* s_ready;
  PyObject* s_Tensor;
  PyObject* s_tensor_types;
  PyObject* s_DTYPES;
  PyObject* s_raw_stream;
  PyObject* s_api;     /* "__dlpack_c_exchange_api__" */
  PyObject* s_api_old; /* "__c_dlpack_exchange_api__" */
  /* The exchange API of api_type (= _call._Tensor when it was looked up; a strong reference:
   * everything below is redone when _call._Tensor is another type), the dtype words the Python
   * path maps (_DTYPES' values) at that time, and one verdict per tensor type read so far:
   * entry 0 is api_type itself, the others registered subclasses (nn.Parameter, ...). */
  PyObject* api_type;
  PyObject* api_holder; /* the attribute the API came from (a strong reference) */
  PyObject* api_name;   /* its name: s_api or s_api_old (borrowed from this state) */
  const dlpack_exchange_api* api;
  int num_api_dtypes;
  uint32_t api_dtypes[MAX_API_DTYPES];
  int num_api_types;
  PyObject* api_types[MAX_API_TYPES]; /* strong references */
  int api_states[MAX_API_TYPES];
} fast_state;

static fast_state* get_state(PyObject* module) { return (fast_state*)PyModule_GetState(module); }

/* The Python implementation with the same arguments. */
static PyObject* call_fallback(fast_state* st, PyObject* const* args, Py_ssize_t nargs) {
  PyObject* tuple = PyTuple_New(nargs);
  if (tuple == NULL) return NULL;
  for (Py_ssize_t j = 0; j < nargs; ++j) {
    Py_INCREF(args[j]);
    if (PyTuple_SetItem(tuple, j, args[j]) < 0) {
      Py_DECREF(tuple);
      return NULL;
    }
  }
  PyObject* r = PyObject_Call(st->fallback, tuple, NULL);
  Py_DECREF(tuple);
  return r;
}

/* A new reference to ns[name], or NULL (no error set) when it is missing. */
static PyObject* ns_get(fast_state* st, PyObject* name) {
  PyObject* v = PyDict_GetItemWithError(st->ns, name);
  if (v == NULL) return NULL;
  Py_INCREF(v);
  return v;
}

/* int64 items of a tuple into out[0..n); 0 on success, -1 (error set) otherwise. */
static int int64_items(PyObject* tuple, Py_ssize_t n, int64_t* out) {
  for (Py_ssize_t j = 0; j < n; ++j) {
    PyObject* item = PyTuple_GetItem(tuple, j);
    if (item == NULL) return -1;
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) return -1;
    out[j] = (int64_t)v;
  }
  return 0;
}

/* Packs one PyTorch tensor (whose type is known to be torch.Tensor or a seen subclass) as the
 * Python path does. 1: packed; 0: the Python path must take the call (error cleared by the
 * caller). *dev is set to the device index of the first CUDA tensor. */
static int pack_tensor(fast_state* st, PyObject* t, PyObject* dtypes, flashjit_packed_tensor* rec,
                       long* dev) {
  int ok = 0;
  PyObject* shape = NULL;
  PyObject* d_obj = NULL;
  PyObject* ptr_obj = NULL;
  PyObject* dtype = NULL;
  PyObject* strides = NULL;
  shape = PyObject_GetAttr(t, st->s_shape);
  if (shape == NULL || !PyTuple_Check(shape)) goto done;
  Py_ssize_t nd = PyTuple_Size(shape);
  if (nd < 0 || nd > FLASHJIT_PACKED_MAX_DIMS) goto done; /* the Python path says why */
  d_obj = PyObject_CallMethodObjArgs(t, st->s_get_device, NULL);
  if (d_obj == NULL) goto done;
  long d = PyLong_AsLong(d_obj);
  if ((d == -1 && PyErr_Occurred()) || d > INT32_MAX || d < INT32_MIN) goto done;
  ptr_obj = PyObject_CallMethodObjArgs(t, st->s_data_ptr, NULL);
  if (ptr_obj == NULL) goto done;
  unsigned long long ptr = PyLong_AsUnsignedLongLong(ptr_obj);
  if (ptr == (unsigned long long)-1 && PyErr_Occurred()) goto done;
  dtype = PyObject_GetAttr(t, st->s_dtype);
  if (dtype == NULL) goto done;
  PyObject* word_obj = PyDict_GetItemWithError(dtypes, dtype); /* borrowed */
  if (word_obj == NULL) goto done;                             /* unmapped: the Python path */
  unsigned long word = PyLong_AsUnsignedLong(word_obj);
  if ((word == (unsigned long)-1 && PyErr_Occurred()) || word > UINT32_MAX) goto done;
  strides = PyObject_CallMethodObjArgs(t, st->s_stride, NULL);
  if (strides == NULL || !PyTuple_Check(strides) || PyTuple_Size(strides) != nd) goto done;
  if (int64_items(shape, nd, rec->shape) < 0 || int64_items(strides, nd, rec->strides) < 0)
    goto done;
  rec->data = (void*)(uintptr_t)ptr;
  if (d >= 0) {
    rec->device_type = 2; /* kDLCUDA */
    rec->device_id = (int32_t)d;
    if (*dev < 0) *dev = d;
  } else {
    rec->device_type = 1; /* kDLCPU */
    rec->device_id = 0;
  }
  rec->ndim = (int32_t)nd;
  uint32_t w = (uint32_t)word;
  memcpy(&rec->dtype, &w, sizeof w); /* code | bits << 8 | lanes << 16, little-endian */
  ok = 1;
done:
  Py_XDECREF(shape);
  Py_XDECREF(d_obj);
  Py_XDECREF(ptr_obj);
  Py_XDECREF(dtype);
  Py_XDECREF(strides);
  return ok;
}

/* The exchange API of `type`, if it has a usable one (capsule or int address, DLPack 1.x with
 * x >= 2, a non-NULL dltensor_from_py_object_no_sync); NULL otherwise, no error set. With
 * `holder`, *holder gets a new reference to the attribute it came from and *name (borrowed)
 * the attribute's name. */
static const dlpack_exchange_api* find_exchange_api(fast_state* st, PyObject* type,
                                                    PyObject** holder, PyObject** name) {
  PyObject* names[2] = {st->s_api, st->s_api_old};
  for (int j = 0; j < 2; ++j) {
    PyObject* a = PyObject_GetAttr(type, names[j]);
    if (a == NULL) {
      PyErr_Clear();
      continue;
    }
    void* ptr = NULL;
    if (PyCapsule_CheckExact(a)) {
      ptr = PyCapsule_GetPointer(a, "dlpack_exchange_api");
    } else if (PyLong_Check(a)) {
      ptr = PyLong_AsVoidPtr(a);
    }
    PyErr_Clear();
    const dlpack_exchange_api* api = (const dlpack_exchange_api*)ptr;
    if (api != NULL && api->header.version.major == 1 && api->header.version.minor >= 2 &&
        api->dltensor_from_py_object_no_sync != NULL) {
      if (holder != NULL) {
        *holder = a;
        *name = names[j];
      } else {
        Py_DECREF(a);
      }
      return api;
    }
    Py_DECREF(a);
  }
  return NULL;
}

/* Whether api_type's API attribute is still the object the API came from (a test, or a
 * library loaded later, may replace it): one attribute lookup per call. */
static int exchange_api_unchanged(fast_state* st) {
  PyObject* a = PyObject_GetAttr(st->api_type, st->api_name);
  if (a == NULL) {
    PyErr_Clear();
    return 0;
  }
  const int same = a == st->api_holder;
  Py_DECREF(a);
  return same;
}

static void forget_exchange_api(fast_state* st) {
  Py_CLEAR(st->api_type);
  Py_CLEAR(st->api_holder);
  for (int j = 0; j < st->num_api_types; ++j) Py_CLEAR(st->api_types[j]);
  st->num_api_types = 0;
  st->api = NULL;
  st->num_api_dtypes = 0;
}

/* Looks up the exchange API of `type` (= _call._Tensor; see the top of this file). */
static void discover_exchange_api(fast_state* st, PyObject* type, PyObject* dtypes) {
  forget_exchange_api(st);
  Py_INCREF(type);
  st->api_type = type;
  const char* env = getenv("FLASHJIT_PYTHON_DLPACK_API");
  if (env != NULL && strcmp(env, "0") == 0) return;
  PyObject *holder = NULL, *name = NULL;
  const dlpack_exchange_api* api = find_exchange_api(st, type, &holder, &name);
  if (api == NULL) return;
  st->api_holder = holder;
  st->api_name = name;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dtypes, &pos, &key, &value)) {
    unsigned long w = PyLong_AsUnsignedLong(value);
    if ((w == (unsigned long)-1 && PyErr_Occurred()) || w > UINT32_MAX ||
        st->num_api_dtypes == MAX_API_DTYPES) {
      PyErr_Clear();
      st->num_api_dtypes = 0;
      return;
    }
    st->api_dtypes[st->num_api_dtypes++] = (uint32_t)w;
  }
  st->api = api;
}

/* The verdict slot of tensor type `type`, made on first sight: unverified when the type is
 * _call._Tensor or inherits the very same API, off otherwise. NULL when the table is full
 * (that type keeps the accessors). */
static int* api_state_of(fast_state* st, PyObject* type) {
  for (int j = 0; j < st->num_api_types; ++j)
    if (st->api_types[j] == type) return &st->api_states[j];
  if (st->num_api_types == MAX_API_TYPES) return NULL;
  const int j = st->num_api_types++;
  Py_INCREF(type);
  st->api_types[j] = type;
  st->api_states[j] = type == st->api_type || find_exchange_api(st, type, NULL, NULL) == st->api
                          ? API_UNVERIFIED
                          : API_OFF;
  return &st->api_states[j];
}

/* Packs `t` through the exchange API. 1: packed; 0: read it through the accessors instead (the
 * API gave something the accessors path would treat differently: a device other than CPU or
 * CUDA, a dtype _DTYPES does not map, more dims than a record holds, no strides); -1: the API
 * failed (its error cleared). */
static int pack_tensor_api(fast_state* st, PyObject* t, flashjit_packed_tensor* rec, long* dev) {
  DLTensor dl;
  if (st->api->dltensor_from_py_object_no_sync((void*)t, &dl) != 0) {
    PyErr_Clear();
    return -1;
  }
  if (dl.ndim < 0 || dl.ndim > FLASHJIT_PACKED_MAX_DIMS || (dl.ndim > 0 && dl.strides == NULL))
    return 0;
  uint32_t w;
  memcpy(&w, &dl.dtype, sizeof w);
  int known = 0;
  for (int j = 0; j < st->num_api_dtypes; ++j) known |= st->api_dtypes[j] == w;
  if (!known) return 0;
  if (dl.device.device_type == kDLCUDA) {
    rec->device_type = 2; /* kDLCUDA */
    rec->device_id = dl.device.device_id;
    if (*dev < 0) *dev = dl.device.device_id;
  } else if (dl.device.device_type == kDLCPU) {
    rec->device_type = 1;
    rec->device_id = 0;
  } else {
    return 0;
  }
  rec->data = (char*)dl.data + dl.byte_offset;
  rec->ndim = dl.ndim;
  memcpy(&rec->dtype, &w, sizeof w);
  for (int j = 0; j < dl.ndim; ++j) {
    rec->shape[j] = dl.shape[j];
    rec->strides[j] = dl.strides[j];
  }
  return 1;
}

static int same_record(const flashjit_packed_tensor* a, const flashjit_packed_tensor* b) {
  if (a->data != b->data || a->device_type != b->device_type || a->device_id != b->device_id ||
      a->ndim != b->ndim || memcmp(&a->dtype, &b->dtype, sizeof a->dtype) != 0)
    return 0;
  for (int j = 0; j < a->ndim; ++j)
    if (a->shape[j] != b->shape[j] || a->strides[j] != b->strides[j]) return 0;
  return 1;
}

/* One tensor of _call._Tensor or a registered subclass: through the exchange API when it is on
 * for its type (the first time also through the accessors, and kept on only if both agree),
 * else pack_tensor. */
static int pack_torch_tensor(fast_state* st, PyObject* t, PyObject* tensor_type, PyObject* dtypes,
                             flashjit_packed_tensor* rec, long* dev) {
  if (st->api_type != tensor_type) discover_exchange_api(st, tensor_type, dtypes);
  int* state = st->api != NULL ? api_state_of(st, (PyObject*)Py_TYPE(t)) : NULL;
  if (state != NULL && *state == API_ON) {
    if (pack_tensor_api(st, t, rec, dev) == 1) return 1;
  } else if (state != NULL && *state == API_UNVERIFIED) {
    /* The first tensor the API packs decides; one it declines leaves the question open. */
    flashjit_packed_tensor by_api;
    long d_api = -1, d_acc = -1;
    const int api = pack_tensor_api(st, t, &by_api, &d_api);
    if (api < 0) *state = API_OFF;
    if (!pack_tensor(st, t, dtypes, rec, &d_acc)) return 0;
    if (api == 1) *state = same_record(&by_api, rec) && d_api == d_acc ? API_ON : API_OFF;
    if (*dev < 0) *dev = d_acc;
    return 1;
  }
  return pack_tensor(st, t, dtypes, rec, dev);
}

/* The handle as the Python path packs it ('Q'): 1 ok, 0 the Python path must take the call. */
static int resolve_handle(fast_state* st, PyObject* handle, uint64_t* out) {
  PyObject* h = NULL;
  int ok = 0;
  if (handle == Py_None) {
    PyObject* e = PyObject_GetAttr(st->engine, st->s_default);
    if (e == NULL) return 0;
    if (e == Py_None) { /* no default engine yet: the Python path creates it */
      Py_DECREF(e);
      return 0;
    }
    h = PyObject_GetAttr(e, st->s_handle);
    Py_DECREF(e);
    if (h == NULL || h == Py_None) goto done; /* closed: the Python path raises */
  } else {
    h = handle;
    Py_INCREF(h);
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(h);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) goto done;
  *out = (uint64_t)v;
  ok = 1;
done:
  Py_XDECREF(h);
  return ok;
}

static PyObject* fast_call(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  fast_state* st = get_state(module);
  if (st == NULL) return NULL;
  if (st->ns == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "_flashjit_fast: init() has not been called");
    return NULL;
  }
  if (nargs < 4) return call_fallback(st, args, nargs);

  PyObject* tensor_type = NULL;
  PyObject* types = NULL;
  PyObject* dtypes = NULL;
  PyObject* item = NULL;
  PyObject* kinds = NULL;
  PyObject* result = NULL;
  int fallback = 1;
  flashjit_packed_call c;
  memset(&c, 0, offsetof(flashjit_packed_call, tensors));

  PyObject* ready = PyDict_GetItemWithError(st->ns, st->s_ready); /* borrowed, not kept */
  if (ready != Py_True) goto out;
  tensor_type = ns_get(st, st->s_Tensor);
  types = ns_get(st, st->s_tensor_types);
  dtypes = ns_get(st, st->s_DTYPES);
  if (tensor_type == NULL || types == NULL || dtypes == NULL || !PyDict_Check(dtypes)) goto out;

  long op = PyLong_AsLong(args[0]);
  if ((op == -1 && PyErr_Occurred()) || op > INT32_MAX || op < INT32_MIN) goto out;

  /* Scalars: their slots from _KINDS[hdr] ('d' -> f[], 'q'/'Q' -> i[]). */
  kinds = PyDict_GetItemWithError(st->kinds, args[1]);
  if (kinds == NULL || !PyUnicode_Check(kinds)) {
    kinds = NULL;
    goto out;
  }
  Py_INCREF(kinds); /* held while a scalar's __float__ or __index__ may run Python code */
  Py_ssize_t nk = 0;
  const char* k = PyUnicode_AsUTF8AndSize(kinds, &nk);
  if (k == NULL || nk != nargs - 4 || nk > 2 * FLASHJIT_PACKED_NUM_SCALARS) goto out;
  int nf = 0, ni = 0;
  for (Py_ssize_t j = 0; j < nk; ++j) {
    PyObject* s = args[4 + j];
    if (k[j] == 'd') {
      if (nf >= FLASHJIT_PACKED_NUM_SCALARS) goto out;
      double v = PyFloat_AsDouble(s);
      if (v == -1.0 && PyErr_Occurred()) goto out;
      c.f[nf++] = v;
    } else if (k[j] == 'q') {
      if (ni >= FLASHJIT_PACKED_NUM_SCALARS || !PyLong_Check(s)) goto out;
      long long v = PyLong_AsLongLong(s);
      if (v == -1 && PyErr_Occurred()) goto out;
      c.i[ni++] = (int64_t)v;
    } else if (k[j] == 'Q') {
      if (ni >= FLASHJIT_PACKED_NUM_SCALARS || !PyLong_Check(s)) goto out;
      unsigned long long v = PyLong_AsUnsignedLongLong(s);
      if (v == (unsigned long long)-1 && PyErr_Occurred()) goto out;
      memcpy(&c.i[ni++], &v, sizeof v);
    } else {
      goto out;
    }
  }

  /* Tensors: PyTorch tensors of a type seen before, or None (an absent optional). */
  PyObject* seq = args[3];
  int is_tuple = PyTuple_Check(seq);
  if (!is_tuple && !PyList_Check(seq)) goto out;
  Py_ssize_t n = is_tuple ? PyTuple_Size(seq) : PyList_Size(seq);
  if (n < 0 || n > FLASHJIT_PACKED_MAX_TENSORS) goto out;
  long dev = -1;
  if (st->api != NULL && st->api_type == tensor_type && !exchange_api_unchanged(st))
    forget_exchange_api(st); /* looked up again at the next tensor */
  for (Py_ssize_t j = 0; j < n; ++j) {
    if (!is_tuple && j >= PyList_Size(seq)) goto out; /* the list changed under us */
    item = is_tuple ? PyTuple_GetItem(seq, j) : PyList_GetItem(seq, j);
    if (item == NULL) goto out;
    Py_INCREF(item);
    flashjit_packed_tensor* rec = &c.tensors[j];
    if (item == Py_None) {
      rec->data = NULL;
      rec->device_type = 0;
      rec->device_id = 0;
      rec->ndim = FLASHJIT_PACKED_ABSENT;
    } else {
      PyObject* type = (PyObject*)Py_TYPE(item);
      if (type != tensor_type) {
        int seen = PyAnySet_Check(types) ? PySet_Contains(types, type) : -1;
        if (seen != 1) goto out; /* a DLPack object, or a subclass not registered yet */
      }
      if (!pack_torch_tensor(st, item, tensor_type, dtypes, rec, &dev)) goto out;
    }
    Py_CLEAR(item);
  }
  uint64_t handle = 0;
  if (!resolve_handle(st, args[2], &handle)) goto out;

  /* From here on: no way back to the Python path (the stream query has an effect). */
  fallback = 0;
  uint64_t stream = 0;
  if (dev >= 0) {
    PyObject* getter = ns_get(st, st->s_raw_stream);
    if (getter == NULL && PyErr_Occurred()) goto out;
    if (getter != NULL && getter != Py_None) {
      PyObject* index = PyLong_FromLong(dev);
      PyObject* s = index != NULL ? PyObject_CallFunctionObjArgs(getter, index, NULL) : NULL;
      Py_XDECREF(index);
      Py_DECREF(getter);
      if (s == NULL) goto out;
      if (!PyLong_Check(s)) {
        PyErr_SetString(st->struct_error, "required argument is not an integer");
        Py_DECREF(s);
        goto out;
      }
      unsigned long long v = PyLong_AsUnsignedLongLong(s);
      Py_DECREF(s);
      if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(st->struct_error, "argument out of range");
        goto out;
      }
      stream = (uint64_t)v;
    } else {
      Py_XDECREF(getter);
    }
  }
  c.op = (int32_t)op;
  c.num_tensors = (int32_t)n;
  c.handle = (void*)(uintptr_t)handle;
  c.stream = (void*)(uintptr_t)stream;
  /* The GIL is released as ctypes does: a first call may compile for a while. The block is on
   * this thread's stack; the tensors stay referenced by the caller's arguments. */
  PyThreadState* ts = PyEval_SaveThread();
  flashjit_status rc = flashjit_call_packed(&c);
  PyEval_RestoreThread(ts);
  if (rc != FLASHJIT_OK) {
    PyObject* code = PyLong_FromLong((long)rc);
    if (code == NULL) goto out;
    PyObject* r = PyObject_CallFunctionObjArgs(st->raise_fn, code, NULL);
    Py_DECREF(code);
    if (r == NULL) goto out; /* the exception raise_error raised */
    Py_DECREF(r);
  }
  Py_INCREF(Py_None);
  result = Py_None;
out:
  Py_XDECREF(kinds);
  Py_XDECREF(item);
  Py_XDECREF(tensor_type);
  Py_XDECREF(types);
  Py_XDECREF(dtypes);
  if (fallback) {
    PyErr_Clear();
    return call_fallback(st, args, nargs);
  }
  return result;
}

static PyObject* fast_init(PyObject* module, PyObject* args) {
  fast_state* st = get_state(module);
  PyObject *ns, *fallback, *raise_fn, *kinds, *engine;
  if (st == NULL) return NULL;
  if (!PyArg_ParseTuple(args, "O!OOO!O:init", &PyDict_Type, &ns, &fallback, &raise_fn, &PyDict_Type,
                        &kinds, &engine))
    return NULL;
  if (st->ns != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "_flashjit_fast: init() was already called");
    return NULL;
  }
  if (!PyCallable_Check(fallback) || !PyCallable_Check(raise_fn)) {
    PyErr_SetString(PyExc_TypeError, "_flashjit_fast.init: fallback and raise_fn must be callable");
    return NULL;
  }
  Py_INCREF(ns);
  Py_INCREF(fallback);
  Py_INCREF(raise_fn);
  Py_INCREF(kinds);
  Py_INCREF(engine);
  st->ns = ns;
  st->fallback = fallback;
  st->raise_fn = raise_fn;
  st->kinds = kinds;
  st->engine = engine;
  Py_RETURN_NONE;
}

static PyObject* fast_call_packed_address(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  return PyLong_FromVoidPtr((void*)&flashjit_call_packed);
}

static PyObject* fast_exchange_api_state(PyObject* module, PyObject* const* args,
                                         Py_ssize_t nargs) {
  fast_state* st = get_state(module);
  if (st == NULL) return NULL;
  if (nargs > 1) {
    PyErr_SetString(PyExc_TypeError, "exchange_api_state([type])");
    return NULL;
  }
  PyObject* type = nargs == 1 ? args[0] : st->api_type;
  int state = API_UNKNOWN;
  if (st->api_type != NULL && st->api == NULL) state = API_OFF;
  for (int j = 0; j < st->num_api_types; ++j)
    if (st->api_types[j] == type) state = st->api_states[j];
  const char* names[] = {"off", "unknown", "unverified", "on"};
  return PyUnicode_FromString(names[state + 1]);
}

static PyObject* fast_reset_exchange_api(PyObject* module, PyObject* unused) {
  (void)unused;
  fast_state* st = get_state(module);
  if (st == NULL) return NULL;
  forget_exchange_api(st);
  Py_RETURN_NONE;
}

static PyMethodDef fast_methods[] = {
    {"call", (PyCFunction)(void (*)(void))fast_call, METH_FASTCALL,
     "call(op, hdr, handle, tensors, *scalars): flashjit._call.call in C."},
    {"init", fast_init, METH_VARARGS,
     "init(namespace, fallback, raise_fn, kinds, engine_module): once, by flashjit._call."},
    {"call_packed_address", fast_call_packed_address, METH_NOARGS,
     "The address of the flashjit_call_packed this module calls (to check it is the same "
     "library as the package's)."},
    {"exchange_api_state", (PyCFunction)(void (*)(void))fast_exchange_api_state, METH_FASTCALL,
     "exchange_api_state([type]): how tensors of `type` (default: _call._Tensor) are read: "
     "'on' (the DLPack C exchange API, checked against the accessors), 'off' (the accessors), "
     "'unknown' / 'unverified' (none read yet)."},
    {"reset_exchange_api", fast_reset_exchange_api, METH_NOARGS,
     "Forgets the exchange-API state: the next tensor looks the API up again (tests)."},
    {NULL, NULL, 0, NULL}};

static int fast_exec(PyObject* module) {
  fast_state* st = get_state(module);
  if (st == NULL) return -1;
#define INTERN(field, text)                                     \
  if ((st->field = PyUnicode_InternFromString(text)) == NULL) { \
    return -1;                                                  \
  }
  INTERN(s_shape, "shape");
  INTERN(s_stride, "stride");
  INTERN(s_get_device, "get_device");
  INTERN(s_data_ptr, "data_ptr");
  INTERN(s_dtype, "dtype");
  INTERN(s_default, "_default");
  INTERN(s_handle, "_handle");
  INTERN(s_ready, "_ready");
  INTERN(s_Tensor, "_Tensor");
  INTERN(s_tensor_types, "_tensor_types");
  INTERN(s_DTYPES, "_DTYPES");
  INTERN(s_raw_stream, "_raw_stream");
  INTERN(s_api, "__dlpack_c_exchange_api__");
  INTERN(s_api_old, "__c_dlpack_exchange_api__");
#undef INTERN
  PyObject* struct_module = PyImport_ImportModule("struct");
  if (struct_module == NULL) return -1;
  st->struct_error = PyObject_GetAttrString(struct_module, "error");
  Py_DECREF(struct_module);
  if (st->struct_error == NULL) return -1;
  if (PyModule_AddIntConstant(module, "ABI_VERSION", FLASHJIT_C_ABI_VERSION) < 0) return -1;
  return 0;
}

static int fast_traverse(PyObject* module, visitproc visit, void* arg) {
  fast_state* st = get_state(module);
  if (st == NULL) return 0;
  Py_VISIT(st->ns);
  Py_VISIT(st->fallback);
  Py_VISIT(st->raise_fn);
  Py_VISIT(st->kinds);
  Py_VISIT(st->engine);
  Py_VISIT(st->struct_error);
  Py_VISIT(st->api_type);
  Py_VISIT(st->api_holder);
  for (int j = 0; j < st->num_api_types; ++j) Py_VISIT(st->api_types[j]);
  return 0;
}

static int fast_clear(PyObject* module) {
  fast_state* st = get_state(module);
  if (st == NULL) return 0;
  Py_CLEAR(st->ns);
  Py_CLEAR(st->fallback);
  Py_CLEAR(st->raise_fn);
  Py_CLEAR(st->kinds);
  Py_CLEAR(st->engine);
  Py_CLEAR(st->struct_error);
  Py_CLEAR(st->s_shape);
  Py_CLEAR(st->s_stride);
  Py_CLEAR(st->s_get_device);
  Py_CLEAR(st->s_data_ptr);
  Py_CLEAR(st->s_dtype);
  Py_CLEAR(st->s_default);
  Py_CLEAR(st->s_handle);
  Py_CLEAR(st->s_ready);
  Py_CLEAR(st->s_Tensor);
  Py_CLEAR(st->s_tensor_types);
  Py_CLEAR(st->s_DTYPES);
  Py_CLEAR(st->s_raw_stream);
  Py_CLEAR(st->s_api);
  Py_CLEAR(st->s_api_old);
  forget_exchange_api(st);
  return 0;
}

static void fast_free(void* module) { fast_clear((PyObject*)module); }

static PyModuleDef_Slot fast_slots[] = {{Py_mod_exec, (void*)fast_exec}, {0, NULL}};

static struct PyModuleDef fast_module = {
    PyModuleDef_HEAD_INIT,
    "_flashjit_fast",
    "flashjit._call.call in C over flashjit_call_packed (stable ABI).",
    sizeof(fast_state),
    fast_methods,
    fast_slots,
    fast_traverse,
    fast_clear,
    fast_free,
};

PyMODINIT_FUNC PyInit__flashjit_fast(void) { return PyModuleDef_Init(&fast_module); }
