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
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include <backendbench/detail/python_bridge.h>

namespace {

constexpr const char* kGlue = R"PY(
import contextlib, importlib.util, inspect, json, os, shutil, subprocess, sys, time, traceback

_loaded = 0
_compiles = [0, 0.0]  # Triton's JIT: compilations seen, their seconds
_hooked = False
_streams = {}

def start(python, explicit):
    """The packages of `python` (or of `python3` on the PATH, where it is this installation or a
    venv of it), then PyTorch, imported before any implementation can change it."""
    sys.dont_write_bytecode = True
    if not python:
        python = shutil.which("python3") or ""
    if python:
        probe = "import json, sys; print(json.dumps([list(sys.version_info[:2]), sys.base_prefix, sys.path]))"
        try:
            done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120)
            version, base, path = json.loads(done.stdout)
        except Exception as e:
            if explicit:
                raise RuntimeError("the interpreter %s (--python) cannot be asked for its packages: %s" % (python, e))
            version = None
        if version is not None and tuple(version) != tuple(sys.version_info[:2]):
            if explicit:
                raise RuntimeError("the interpreter %s (--python) is Python %d.%d; this build embeds Python %d.%d: build BackendBench "
                                   "with that interpreter's development files (pkg-config python3-embed)"
                                   % ((python,) + tuple(version) + tuple(sys.version_info[:2])))
        elif version is not None and (explicit or os.path.realpath(base) == os.path.realpath(sys.base_prefix)):
            sys.path[:] = [p for p in path if p]
    try:
        import torch
        from torch.utils.dlpack import from_dlpack
    except ImportError as e:
        raise ImportError("Python implementations need PyTorch (tensors cross as DLPack): %s (sys.path: %s)" % (e, sys.path))
    # What a call uses, taken now: an implementation that patches torch later changes none of it.
    global _call_defaults
    _call_defaults = (torch.Tensor, from_dlpack, torch.Tensor.data_ptr, torch.Tensor.is_contiguous, torch.Tensor.contiguous,
                      torch.Tensor.resolve_conj, torch.Tensor.resolve_neg, type, len, tuple, list, zip, enumerate, contextlib.nullcontext())
    call.__defaults__ = _call_defaults
    return call

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
    hook_triton()
    fns = []
    for symbol in (op + "_kernel_impl", op + "_reference"):
        fn = getattr(module, symbol, None)
        fns.append((fn, _takes_out(fn)) if callable(fn) else None)
    info = getattr(module, "BACKENDBENCH_INFO", {})
    if not isinstance(info, dict):
        raise TypeError("%s: BACKENDBENCH_INFO must be a dict of devices, dtypes and version" % path)
    return fns[0], fns[1], json.dumps({k: info[k] for k in ("devices", "dtypes", "version") if k in info})

def hook_triton():
    """Times Triton's compilations (its JIT compiles a kernel at its first launch of a new
    specialisation): reported apart, and never inside a timed call that the host did not see."""
    global _hooked
    if _hooked or "triton" not in sys.modules:
        return
    _hooked = True
    triton = sys.modules["triton"]
    started = {}
    def pre(*args, **kwargs):
        started[kwargs.get("key", None)] = time.perf_counter()
        return False
    def post(*args, **kwargs):
        t0 = started.pop(kwargs.get("key", None), None)
        _compiles[0] += 1
        if t0 is not None:
            _compiles[1] += time.perf_counter() - t0
        return False
    def chain(first, then):
        if first is None:
            return then
        def both(*args, **kwargs):
            then(*args, **kwargs)
            return first(*args, **kwargs)
        return both
    knobs = getattr(triton, "knobs", None)
    runtime = getattr(knobs, "runtime", None)
    if runtime is not None and hasattr(runtime, "jit_post_compile_hook"):
        runtime.jit_cache_hook = chain(runtime.jit_cache_hook, pre)
        runtime.jit_post_compile_hook = chain(runtime.jit_post_compile_hook, post)
        return
    try:
        from triton.runtime.jit import JITFunction
        JITFunction.cache_hook = chain(getattr(JITFunction, "cache_hook", None), pre)
        JITFunction.compiled_hook = chain(getattr(JITFunction, "compiled_hook", None), post)
    except Exception:
        pass

def compile_seconds():
    return _compiles[0], _compiles[1]

def _takes_out(fn):
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False

def _describe(t):
    return "shape %s, %s on %s" % (tuple(t.shape), str(t.dtype).replace("torch.", ""), t.device)

def _place(stream):
    import torch
    s = _streams.get(stream)
    if s is None:
        s = _streams[stream] = torch.cuda.ExternalStream(stream)
    return torch.cuda.stream(s)

def _wrong_count(got, outs):
    raise TypeError("returned %s; expected %d tensor%s (%s)" % (
        type(got).__name__ if not isinstance(got, (tuple, list)) else "%d values" % len(got),
        len(outs), "" if len(outs) == 1 else "s", "; ".join(_describe(o) for o in outs)))

def _wrong_value(k, g, o):
    import torch
    if not isinstance(g, torch.Tensor):
        raise TypeError("output %d: returned %s, not a tensor" % (k, type(g).__name__))
    if type(g) is not torch.Tensor:
        raise TypeError("output %d: returned a %s, a subclass of torch.Tensor: return a plain tensor (the host copies its "
                        "memory; a subclass could compute when read, outside the timed call)" % (k, type(g).__name__))
    raise TypeError("output %d: returned %s; expected %s" % (k, _describe(g), _describe(o)))

def call(fn, takes_out, inputs, outputs, attrs, stream, Tensor=None, from_dlpack=None, data_ptr=None, is_contiguous=None,
         contiguous=None, resolve_conj=None, resolve_neg=None, type=type, len=len, tuple=tuple, list=list, zip=zip,
         enumerate=enumerate, nowhere=None):
    """One call: returns None (the outputs written in place), or the pointers to copy from and
    the tensors that hold them (kept by the bridge until the copy is made)."""
    ins = [from_dlpack(c) for c in inputs]
    outs = [from_dlpack(c) for c in outputs]
    with (_place(stream) if stream else nowhere):
        if takes_out:
            fn(*ins, out=outs[0] if len(outs) == 1 else tuple(outs), **attrs)
            return None
        got = fn(*ins, **attrs)
        if type(got) is Tensor:
            got = (got,)
        if (type(got) is not tuple and type(got) is not list) or len(got) != len(outs):
            _wrong_count(got, outs)
        pointers, kept = [], []
        for k, (g, o) in enumerate(zip(got, outs)):
            if type(g) is not Tensor or g.shape != o.shape or g.dtype != o.dtype or g.device != o.device:
                _wrong_value(k, g, o)
            g = resolve_neg(resolve_conj(g))
            if not is_contiguous(g):
                g = contiguous(g)
            p = data_ptr(g)
            pointers.append(0 if p == data_ptr(o) else p)
            kept.append(g)
        return pointers, kept

def error_text(kind, value, trace):
    return "".join(traceback.format_exception(kind, value, trace)).rstrip()
)PY";

PyObject* g_glue = nullptr;
PyObject* g_call = nullptr;           // the glue's call, taken before any implementation is imported
PyObject* g_call_code = nullptr;      // ... and what it runs: an implementation that rewrites it is refused
PyObject* g_call_defaults = nullptr;  // ... with the values it uses (PyTorch's own functions, taken at start)
bool g_ready = false;
std::string g_start_error;

struct Bound {
  PyObject* fn = nullptr;
  bool takes_out = false;
};
constexpr int kSlots = 16;
Bound g_bound[kSlots];
int g_used = 0;

// What the last call returned: pointers to copy from, and the tensors that hold them.
std::vector<const void*> g_returned;
PyObject* g_kept = nullptr;

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

// Starts the interpreter once: its glue, the packages of the interpreter the host names
// (BB_PYTHON_ENV) or of `python3` on the PATH, and PyTorch. Called without the GIL.
bool start_python(std::string& error) {
  if (g_ready) return true;
  if (!g_start_error.empty()) {
    error = g_start_error;
    return false;
  }
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
    g_start_error = error = "the embedded interpreter could not start its glue";
    PyEval_SaveThread();
    return false;
  }
  g_glue = module;
  const char* python = std::getenv(BB_PYTHON_ENV);
  PyObject* call = PyObject_CallMethod(g_glue, "start", "sO", python ? python : "", python && *python ? Py_True : Py_False);
  if (!call || !PyFunction_Check(call)) {
    g_start_error = error = take_error();
    Py_XDECREF(call);
    PyEval_SaveThread();
    return false;
  }
  g_call = call;
  g_call_code = PyFunction_GetCode(call);
  g_call_defaults = PyFunction_GetDefaults(call);
  Py_XINCREF(g_call_code);
  Py_XINCREF(g_call_defaults);
  g_ready = true;
  PyEval_SaveThread();  // calls take the GIL where they run
  return true;
}

// Drops what the last call returned. Called with the GIL held.
void drop_returned() {
  g_returned.clear();
  Py_CLEAR(g_kept);
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
  drop_returned();
  if (PyFunction_GetCode(g_call) != g_call_code || PyFunction_GetDefaults(g_call) != g_call_defaults) {
    write_message("the implementation changed BackendBench's Python glue (the code or the bound values of the function that calls it): "
                  "refused",
                  call->error, call->error_capacity);
    PyGILState_Release(gil);
    return BB_ERR_GENERIC;
  }
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
  PyObject* r = PyObject_CallFunctionObjArgs(g_call, b.fn, b.takes_out ? Py_True : Py_False, inputs, outputs, attrs, stream, nullptr);
  int status = BB_OK;
  if (!r) {
    write_message(take_error(), call->error, call->error_capacity);
    status = BB_ERR_GENERIC;
  } else if (r != Py_None) {
    // (pointers, tensors): the copy into the host's outputs is the worker's, after the call.
    PyObject* pointers = PyTuple_Check(r) && PyTuple_Size(r) == 2 ? PyTuple_GetItem(r, 0) : nullptr;
    if (!pointers || !PyList_Check(pointers) || PyList_Size(pointers) != call->num_outputs) {
      write_message("the Python glue returned something other than the outputs' pointers", call->error, call->error_capacity);
      status = BB_ERR_GENERIC;
    } else {
      for (Py_ssize_t k = 0; k < PyList_Size(pointers); ++k) g_returned.push_back(PyLong_AsVoidPtr(PyList_GetItem(pointers, k)));
      g_kept = PyTuple_GetItem(r, 1);
      Py_XINCREF(g_kept);
      if (PyErr_Occurred()) {
        write_message(take_error(), call->error, call->error_capacity);
        drop_returned();
        status = BB_ERR_GENERIC;
      }
    }
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

const void* returned(int32_t k) { return k >= 0 && static_cast<size_t>(k) < g_returned.size() ? g_returned[static_cast<size_t>(k)] : nullptr; }

void release() {
  if (!g_ready) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  drop_returned();
  PyGILState_Release(gil);
}

double compile_seconds(int64_t* compiles) {
  double seconds = 0;
  int64_t count = 0;
  if (g_ready) {
    PyGILState_STATE gil = PyGILState_Ensure();
    if (PyObject* r = PyObject_CallMethod(g_glue, "compile_seconds", nullptr)) {
      count = PyLong_AsLongLong(PyTuple_GetItem(r, 0));
      seconds = PyFloat_AsDouble(PyTuple_GetItem(r, 1));
      Py_DECREF(r);
    }
    PyErr_Clear();
    PyGILState_Release(gil);
  }
  if (compiles) *compiles = count;
  return seconds;
}

const bb_python_bridge kBridge = {sizeof(bb_python_bridge), BB_PYTHON_BRIDGE_VERSION, load, returned, release, compile_seconds};

}  // namespace

extern "C" __attribute__((visibility("default"))) const bb_python_bridge* backendbench_python_bridge(void) { return &kBridge; }
