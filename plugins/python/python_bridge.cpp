// The Python implementation kind's bridge (backendbench/detail/python_bridge.h): CPython
// embedded in the worker that serves a .py implementation. The glue is Python (kGlue below):
// the file imported as a module, its function called with the inputs as PyTorch tensors that
// share the host's buffers (DLPack, no copy), the attributes as keyword arguments, on the
// call's stream; a returned tensor (or tuple) checked for count, shape, dtype and device and
// copied into the host's output, or the output passed as `out=` where the function takes it.
// An exception is the call's error, with its traceback.
#include <Python.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <dlpack/dlpack.h>

#include <backendbench/detail/python_bridge.h>

namespace {

constexpr const char* kGlue = R"PY(
import contextlib, importlib.util, inspect, json, os, sys, traceback

_loaded = 0

def load(path, op):
    global _loaded
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    _loaded += 1
    name = "_backendbench_impl_%d_%s" % (_loaded, os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("%s: not a Python module" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    fns = []
    for symbol in (op + "_kernel_impl", op + "_reference"):
        fn = getattr(module, symbol, None)
        fns.append((fn, _takes_out(fn)) if callable(fn) else None)
    info = getattr(module, "BACKENDBENCH_INFO", {})
    if not isinstance(info, dict):
        raise TypeError("%s: BACKENDBENCH_INFO must be a dict of devices, dtypes and version" % path)
    return fns[0], fns[1], json.dumps({k: info[k] for k in ("devices", "dtypes", "version") if k in info})

def _takes_out(fn):
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False

def _describe(t):
    return "shape %s, %s on %s" % (tuple(t.shape), str(t.dtype).replace("torch.", ""), t.device)

def call(fn, takes_out, inputs, outputs, attrs, stream):
    import torch
    from torch.utils.dlpack import from_dlpack
    ins = [from_dlpack(c) for c in inputs]
    outs = [from_dlpack(c) for c in outputs]
    place = contextlib.nullcontext()
    if stream:
        place = torch.cuda.stream(torch.cuda.ExternalStream(stream))
    with place:
        if takes_out:
            fn(*ins, out=outs[0] if len(outs) == 1 else tuple(outs), **attrs)
            return
        got = fn(*ins, **attrs)
        if isinstance(got, torch.Tensor):
            got = (got,)
        if not isinstance(got, (tuple, list)) or len(got) != len(outs):
            raise TypeError("returned %s; expected %d tensor%s (%s)" % (
                type(got).__name__ if not isinstance(got, (tuple, list)) else "%d values" % len(got),
                len(outs), "" if len(outs) == 1 else "s", "; ".join(_describe(o) for o in outs)))
        for k, (g, o) in enumerate(zip(got, outs)):
            if not isinstance(g, torch.Tensor):
                raise TypeError("output %d: returned %s, not a tensor" % (k, type(g).__name__))
            if g.shape != o.shape or g.dtype != o.dtype or g.device != o.device:
                raise TypeError("output %d: returned %s; expected %s" % (k, _describe(g), _describe(o)))
            if g.data_ptr() != o.data_ptr():
                o.copy_(g)

def error_text(kind, value, trace):
    return "".join(traceback.format_exception(kind, value, trace)).rstrip()
)PY";

PyObject* g_glue = nullptr;
bool g_ready = false;

struct Bound {
  PyObject* fn = nullptr;
  bool takes_out = false;
};
constexpr int kSlots = 16;
Bound g_bound[kSlots];
int g_used = 0;

void write_message(const std::string& text, char* out, size_t capacity) {
  if (!out || capacity == 0) return;
  // The head (where it happened) and the tail (what happened) of a long traceback.
  std::string s = text;
  if (s.size() >= capacity) {
    const size_t keep = capacity - 1, head = keep / 3, tail = keep - head - 5;
    s = s.substr(0, head) + "\n...\n" + s.substr(s.size() - tail);
  }
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
}

// The pending exception's traceback, cleared. Called with the GIL held.
std::string take_error() {
  std::string text = "a Python error";
  if (!PyErr_Occurred()) return text;
  PyObject *type, *value, *trace;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  if (trace && value) PyException_SetTraceback(value, trace);
  if (PyObject* r = PyObject_CallMethod(g_glue, "error_text", "OOO", type ? type : Py_None, value ? value : Py_None, trace ? trace : Py_None)) {
    if (const char* s = PyUnicode_AsUTF8(r)) text = s;
    Py_DECREF(r);
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  PyErr_Clear();
  return text;
}

bool start_python(std::string& error) {
  if (g_ready) return true;
  // The worker opened this bridge, and with it libpython, for its own use (RTLD_LOCAL); the
  // interpreter's extension modules (ctypes, PyTorch's) resolve its symbols globally.
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(&Py_InitializeEx), &where) && where.dli_fname)
    dlopen(where.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  if (!Py_IsInitialized()) Py_InitializeEx(0);  // no signal handlers: the worker keeps its own
  PyObject* code = Py_CompileString(kGlue, "<backendbench glue>", Py_file_input);
  PyObject* module = code ? PyImport_ExecCodeModule("_backendbench_glue", code) : nullptr;
  Py_XDECREF(code);
  if (!module) {
    PyErr_Print();
    error = "the embedded interpreter could not start its glue";
    return false;
  }
  g_glue = module;
  g_ready = true;
  PyEval_SaveThread();  // calls take the GIL where they run
  return true;
}

void free_managed(DLManagedTensor* m) { delete m; }

void free_capsule(PyObject* capsule) {
  // Never consumed (the name is still "dltensor"): the tensor was not made from it.
  if (PyCapsule_IsValid(capsule, "dltensor"))
    if (auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"))) m->deleter(m);
}

// A capsule over the host's tensor: the consumer shares its memory and, when done, frees only
// the wrapper (the buffer is the host's).
PyObject* capsule_of(const DLTensor& t) {
  auto* m = new DLManagedTensor{};
  m->dl_tensor = t;
  m->manager_ctx = nullptr;
  m->deleter = free_managed;
  return PyCapsule_New(m, "dltensor", free_capsule);
}

PyObject* attr_value(const bb_attr& a) {
  switch (a.kind) {
    case BB_ATTR_INT: return PyLong_FromLongLong(a.i);
    case BB_ATTR_FLOAT: return PyFloat_FromDouble(a.f);
    case BB_ATTR_BOOL: return PyBool_FromLong(a.i != 0);
    case BB_ATTR_STRING: return PyUnicode_FromString(a.s ? a.s : "");
    case BB_ATTR_INT_LIST: {
      PyObject* l = PyList_New(a.count);
      for (int64_t k = 0; l && k < a.count; ++k) PyList_SET_ITEM(l, k, PyLong_FromLongLong(a.ints[k]));
      return l;
    }
    case BB_ATTR_FLOAT_LIST: {
      PyObject* l = PyList_New(a.count);
      for (int64_t k = 0; l && k < a.count; ++k) PyList_SET_ITEM(l, k, PyFloat_FromDouble(a.floats[k]));
      return l;
    }
    default: Py_RETURN_NONE;
  }
}

int call_bound(int slot, const bb_call* call) {
  const Bound& b = g_bound[slot];
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* inputs = PyList_New(call->num_inputs);
  PyObject* outputs = PyList_New(call->num_outputs);
  PyObject* attrs = PyDict_New();
  for (int32_t k = 0; k < call->num_inputs; ++k) PyList_SET_ITEM(inputs, k, capsule_of(call->inputs[k]));
  for (int32_t k = 0; k < call->num_outputs; ++k) PyList_SET_ITEM(outputs, k, capsule_of(call->outputs[k]));
  for (int32_t k = 0; k < call->num_attrs; ++k) {
    PyObject* v = attr_value(call->attrs[k]);
    PyDict_SetItemString(attrs, call->attrs[k].name, v);
    Py_XDECREF(v);
  }
  PyObject* stream = PyLong_FromVoidPtr(call->stream);
  PyObject* r = PyObject_CallMethod(g_glue, "call", "OOOOOO", b.fn, b.takes_out ? Py_True : Py_False, inputs, outputs, attrs, stream);
  int status = BB_OK;
  if (!r) {
    write_message(take_error(), call->error, call->error_capacity);
    status = BB_ERR_GENERIC;
  }
  Py_XDECREF(r);
  Py_DECREF(stream);
  Py_DECREF(attrs);
  Py_DECREF(outputs);
  Py_DECREF(inputs);
  PyGILState_Release(gil);
  return status;
}

template <int K>
int trampoline(const bb_call* call) {
  return call_bound(K, call);
}
constexpr bb_kernel_fn kFns[kSlots] = {trampoline<0>,  trampoline<1>,  trampoline<2>,  trampoline<3>,  trampoline<4>,  trampoline<5>,
                                       trampoline<6>,  trampoline<7>,  trampoline<8>,  trampoline<9>,  trampoline<10>, trampoline<11>,
                                       trampoline<12>, trampoline<13>, trampoline<14>, trampoline<15>};

// Binds (fn, takes_out) to the next trampoline. Called with the GIL held.
bb_kernel_fn bind(PyObject* pair, std::string& error) {
  if (pair == Py_None) return nullptr;
  if (g_used == kSlots) {
    error = "too many Python functions loaded in one worker";
    return nullptr;
  }
  PyObject* fn = PyTuple_GetItem(pair, 0);
  Py_INCREF(fn);
  g_bound[g_used] = {fn, PyObject_IsTrue(PyTuple_GetItem(pair, 1)) == 1};
  return kFns[g_used++];
}

int load(const char* file, const char* op, bb_kernel_fn* kernel_impl, bb_kernel_fn* reference, char* info, size_t info_capacity,
         char* error, size_t error_capacity) {
  std::string why;
  if (!start_python(why)) {
    write_message(why, error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  int status = 0;
  PyObject* r = PyObject_CallMethod(g_glue, "load", "ss", file, op);
  if (!r) {
    write_message(take_error(), error, error_capacity);
    status = 1;
  } else {
    *kernel_impl = bind(PyTuple_GetItem(r, 0), why);
    *reference = bind(PyTuple_GetItem(r, 1), why);
    const char* text = PyUnicode_AsUTF8(PyTuple_GetItem(r, 2));
    write_message(text ? text : "{}", info, info_capacity);
    if (!why.empty()) {
      write_message(why, error, error_capacity);
      status = 1;
    }
    Py_DECREF(r);
  }
  PyGILState_Release(gil);
  return status;
}

const bb_python_bridge kBridge = {sizeof(bb_python_bridge), BB_PYTHON_BRIDGE_VERSION, load};

}  // namespace

extern "C" __attribute__((visibility("default"))) const bb_python_bridge* backendbench_python_bridge(void) { return &kBridge; }
