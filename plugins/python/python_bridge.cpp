// The Python implementation kind's bridge (backendbench/detail/python_bridge.h): CPython
// embedded in the worker that serves a .py implementation. The glue is Python (kGlue below):
// the file imported as a module, its function called with the inputs as PyTorch tensors that
// share the host's buffers (DLPack, no copy), the attributes as keyword arguments, on the
// call's stream; a returned tensor (or tuple) checked for count, shape, dtype and device and
// handed back as a pointer, which the worker copies into the host's output after the call,
// outside the timed region (or the output passed as `out=` where the function takes it). An
// exception is the call's error, with its traceback. Also: Triton's compilations counted apart,
// a BackendBench-py gen_input.py made into a manifest, and a folder's files surveyed.
#include <Python.h>

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
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

def start(python, explicit, site):
    """The packages of the interpreter the host asked (`site`: its answer), or of `python` (or of
    `python3` on the PATH, where it is this installation or a venv of it), then PyTorch, imported
    before any implementation can change it."""
    sys.dont_write_bytecode = True
    # An implementation's prints reach the worker's output by the line, so each is filed under
    # the test that printed it, and a crash loses none that ended with a newline.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=True)
        except (AttributeError, ValueError):
            pass
    private_triton_cache()
    answer = None
    if site:
        answer = json.loads(site)
        explicit = answer.get("named", explicit)
        python = answer.get("interpreter", python)
    else:
        python = python or shutil.which("python3") or ""
        probe = "import json, sys; print(json.dumps({'version': list(sys.version_info[:2]), 'base_prefix': sys.base_prefix, 'path': sys.path}))"
        try:
            answer = json.loads(subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120).stdout) if python else None
        except Exception as e:
            if explicit:
                raise RuntimeError("the interpreter %s (--python) cannot be asked for its packages: %s" % (python, e))
    if answer is not None:
        version = tuple(answer.get("version", ()))
        if version != tuple(sys.version_info[:2]):
            if explicit:
                raise RuntimeError("the interpreter %s (--python) is Python %s; this build embeds Python %d.%d: build BackendBench "
                                   "with that interpreter's development files (pkg-config python3-embed)"
                                   % ((python, ".".join(map(str, version))) + tuple(sys.version_info[:2])))
        elif explicit or os.path.realpath(answer.get("base_prefix", "")) == os.path.realpath(sys.base_prefix):
            sys.path[:] = [p for p in answer.get("path", ()) if p]
    try:
        import torch
        from torch.utils.dlpack import from_dlpack
    except ImportError as e:
        raise ImportError("Python implementations cannot run on this machine: they need PyTorch (tensors cross as DLPack), and %s "
                          "(sys.path: %s; --python names another interpreter; on Debian, apt-get install python3-torch, which "
                          "scripts/install_deps.sh test installs)" % (e, sys.path))
    # What a call uses, taken now: an implementation that patches torch later changes none of it.
    global _call_defaults
    _call_defaults = (torch.Tensor, from_dlpack, torch.Tensor.data_ptr, torch.Tensor.is_contiguous, torch.Tensor.contiguous,
                      torch.Tensor.resolve_conj, torch.Tensor.resolve_neg, type, len, tuple, list, zip, enumerate, contextlib.nullcontext(), isinstance,
                      _gradients, torch.enable_grad, torch.autograd.grad)
    call.__defaults__ = _call_defaults
    return call

def private_triton_cache():
    """Triton's caches (compiled kernels) private to this worker, unless the user chose a place:
    a shared one would let one implementation leave kernels for another to load."""
    if "TRITON_CACHE_DIR" not in os.environ and "TRITON_HOME" not in os.environ:
        import tempfile
        os.environ["TRITON_HOME"] = tempfile.mkdtemp(prefix="triton-", dir=os.environ.get("BACKENDBENCH_PYTHON_SCRATCH") or None)

def become_worker(environment):
    """A child forked from the warm interpreter, its walls up: the worker's environment replaces
    the interpreter's (os.environ and the process's, which os.environ writes through), and its
    Triton cache is its own (Triton reads its settings from the environment when it uses them)."""
    wanted = dict(entry.split("=", 1) for entry in json.loads(environment) if "=" in entry)
    for name in list(os.environ):
        if name not in wanted:
            del os.environ[name]
    for name, value in wanted.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
    import tempfile
    tempfile.tempdir = None  # its TMPDIR, not the one the interpreter found first (a kept one's: another run's)
    private_triton_cache()

def preload():
    """What implementations will import, imported ahead of them (a worker's warm-up): Triton,
    where it is installed. Never an error: an implementation that needs it says so itself."""
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
    except Exception:
        pass

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
    for symbol in (op + "_kernel_impl", op + "_reference", op + "_backward", op + "_backward_reference"):
        fn = getattr(module, symbol, None)
        # A reference is the file's own: an implementation that imports another file's
        # reference (to call it) does not become a second reference.
        if symbol.endswith("_reference") and getattr(fn, "__module__", name) != name:
            fn = None
        fns.append((fn, _takes_out(fn), None) if callable(fn) else None)
    impl, ref, backward, backward_ref = fns
    # Without a backward of its own, a forward is its own backward where PyTorch can differentiate
    # it (plain PyTorch, or a torch.autograd.Function): the worker takes the gradients (_gradients).
    if backward is None and impl is not None:
        backward = (impl[0], impl[1], op + "_backward")
    if backward_ref is None and ref is not None:
        backward_ref = (ref[0], ref[1], op + "_backward_reference")
    info = getattr(module, "BACKENDBENCH_INFO", {})
    if not isinstance(info, dict):
        raise TypeError("%s: BACKENDBENCH_INFO must be a dict of devices, dtypes and version" % path)
    return impl, ref, json.dumps({k: info[k] for k in ("devices", "dtypes", "version") if k in info}), backward, backward_ref

def survey(files, op):
    """What each file defines, each imported in a child of this process (forked once PyTorch is
    imported here, which this process keeps to itself): no file's import can change what another
    reports. The children import side by side (a kernel library can take seconds to import). An
    entry of `files` is a path (of `op`) or a [path, op] pair. A child that dies or fails is
    reported as not loaded (the host probes it again alone)."""
    import selectors
    entries = [e if isinstance(e, list) else [e, op] for e in json.loads(files)]
    children = []
    for path, its_op in entries:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            for other_r, _, _ in children:
                os.close(other_r)
            try:
                impl, ref, info, _, _ = load(path, its_op)
                got = {"loaded": True, "has_kernel_impl": impl is not None, "has_reference": ref is not None, "info": json.loads(info)}
            except BaseException as e:
                got = {"loaded": False, "error": "".join(traceback.format_exception(type(e), e, e.__traceback__))}
            data = json.dumps(got).encode()
            while data:
                data = data[os.write(w, data):]
            os._exit(0)
        os.close(w)
        children.append((r, pid, []))
    # Read every pipe as it fills: a child blocked on a full one never ends.
    sel = selectors.DefaultSelector()
    for k, (r, _, _) in enumerate(children):
        sel.register(r, selectors.EVENT_READ, k)
    open_pipes = len(children)
    while open_pipes:
        for key, _ in sel.select():
            r, _, chunks = children[key.data]
            chunk = os.read(r, 65536)
            if chunk:
                chunks.append(chunk)
            else:
                sel.unregister(r)
                os.close(r)
                open_pipes -= 1
    sel.close()
    found = []
    for r, pid, chunks in children:
        os.waitpid(pid, 0)
        try:
            found.append(json.loads(b"".join(chunks)))
        except ValueError:
            found.append({"loaded": False, "error": "the child importing it died"})
    return json.dumps(found)

_DYNAMIC = ("globals(", "setattr(", "exec(", "eval(", "__dict__", "vars(", "sys.modules", "__getattr__", "import *", "__builtins__")

def read_definitions(files):
    """What each file defines, read from its text (nothing of it runs, PyTorch is not imported):
    the survey's answer where the text says it for certain, else None (the file is imported to
    be surveyed). Certain: each of the op's two functions is a top-level, undecorated `def` that
    nothing else in the file binds, or a name the text never mentions; BACKENDBENCH_INFO a
    literal dict assigned once at the top level and named nowhere else, or never mentioned; and
    nothing that could make names at import (globals(), setattr, exec, a module __getattr__,
    `import *`, ...). An entry of `files` is a [path, op] pair."""
    found = []
    for path, op in json.loads(files):
        try:
            found.append(_read_one(path, op))
        except Exception:
            found.append(None)
    return json.dumps(found)

def _read_one(path, op):
    import ast
    with open(path, "rb") as f:
        source = f.read()
    text = source.decode("utf-8", "replace")
    if any(word in text for word in _DYNAMIC):
        return None
    tree = ast.parse(source, path)
    bindings = {}
    def bind(name, node):
        bindings.setdefault(name, []).append(node)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name, node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bind((a.asname or a.name).split(".")[0], node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bind(node.id, node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                bind(name, node)
        elif isinstance(node, ast.arg):
            bind(node.arg, node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bind(node.name, node)
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            bind(node.name, node)
        elif type(node).__name__ == "MatchMapping" and getattr(node, "rest", None):
            bind(node.rest, node)
    got = {"loaded": True, "read": True, "imports_packages": _imports_packages(tree, path)}
    for symbol, key in ((op + "_kernel_impl", "has_kernel_impl"), (op + "_reference", "has_reference")):
        if symbol not in text:
            got[key] = False
            continue
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == symbol and not n.decorator_list]
        if len(defs) != 1 or bindings.get(symbol) != defs:
            return None
        got[key] = True
    info = {}
    if text.count("BACKENDBENCH_INFO") > 1:
        return None  # changed after it is made, perhaps: imported
    if "BACKENDBENCH_INFO" in text:
        assigned = [n for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                    and n.targets[0].id == "BACKENDBENCH_INFO"]
        if len(assigned) != 1 or bindings.get("BACKENDBENCH_INFO") != [assigned[0].targets[0]]:
            return None
        value = ast.literal_eval(assigned[0].value)
        if not isinstance(value, dict):
            return None  # imported: its error says what it must be
        info = {k: value[k] for k in ("devices", "dtypes", "version") if k in value}
    got["info"] = info
    return got

def _imports_packages(tree, path):
    """Whether the file imports a module from outside its folder other than the standard
    library's, PyTorch and Triton (a kernel library: its worker is best forked from the library
    interpreter that imports it, once that is done)."""
    import ast
    skip = set(getattr(sys, "stdlib_module_names", ())) | {"torch", "triton", "__future__"}
    try:
        beside = {os.path.splitext(e)[0] for e in os.listdir(os.path.dirname(os.path.abspath(path)))}
    except OSError:
        beside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        if any(t not in skip and t not in beside for t in tops):
            return True
    return False

def scan_imports(files):
    """The modules each file imports from outside its own folder, read from its text (nothing of
    it runs): `import a.b` and `from a.b import c` (and a.b.c where that is a module) whose top
    package is installed, not the standard library's, not PyTorch or Triton (imported already),
    and not shadowed by a file or folder of that name beside the file (which the worker would
    import instead: its folder comes first on its sys.path). A file that cannot be read or
    parsed names none (its worker says why)."""
    import ast
    import importlib.util
    skip = set(getattr(sys, "stdlib_module_names", ())) | {"torch", "triton", "__future__"}
    found = {}
    for path in json.loads(files):
        folder = os.path.dirname(os.path.abspath(path))
        names = set()
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), path)
            beside = set(os.listdir(folder))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    wanted = [(a.name, None) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    wanted = [(node.module, [a.name for a in node.names if a.name != "*"])]
                else:
                    continue
                for module, members in wanted:
                    top = module.split(".")[0]
                    if top in skip or any(e == top or e.startswith(top + ".") for e in beside):
                        continue
                    try:
                        if importlib.util.find_spec(top) is None:
                            continue
                    except (ImportError, ValueError):
                        continue
                    names.add(module)
                    for m in members or ():
                        names.add(module + "." + m + "?")  # a submodule, if it is one
        except Exception:
            names = set()
        found[path] = sorted(names)
    return json.dumps(found)

def cuda_initialised():
    """Whether this process has initialised CUDA (a fork of it could not use the device): PyTorch's
    own state, or the driver's (cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED until
    cuInit), asked only where the driver is loaded already."""
    try:
        import torch
        if torch.cuda.is_initialized():
            return True
    except Exception:
        pass
    import ctypes
    try:
        driver = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    count = ctypes.c_int(0)
    return driver.cuDeviceGetCount(ctypes.byref(count)) != 3

def _device_answer():
    """What torch.cuda.is_available() and device_count() answer on this machine, asked in a child
    of this process through NVML: NVML leaves a thread behind (a process with it cannot be
    forked safely) and the CUDA driver's own count initialises CUDA (a fork could not use it).
    None where the child gave no answer."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
            import torch
            data = json.dumps([bool(torch.cuda.is_available()), int(torch.cuda.device_count())]).encode()
        except BaseException:
            data = b"null"
        try:
            os.write(w, data)
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    try:
        got = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return got if isinstance(got, list) and len(got) == 2 else None

def preimport(modules):
    """Imports `modules` (scan_imports's names) here, in a library interpreter forked from the
    warm one, so that each worker forked from it finds them imported. A kernel library that asks
    torch.cuda.is_available() (or device_count()) at import gets the machine's answer, asked
    once in a child (_device_answer): asked here, it would leave this interpreter with CUDA
    initialised or NVML's thread, and no fork of it could be a worker. Arrow's allocator is kept
    from starting its background thread (a package that imports pyarrow, as transformers
    does, would otherwise leave one). An interpreter that has initialised CUDA or kept a thread
    anyway is refused (the host checks the threads)."""
    import importlib
    import importlib.util
    import time
    began = time.time()
    import torch
    answer = _device_answer()
    importing = [True]
    originals = (torch.cuda.is_available, torch.cuda.device_count)
    if answer is not None:
        def is_available():
            return answer[0] if importing[0] else originals[0]()
        def device_count():
            return answer[1] if importing[0] else originals[1]()
        torch.cuda.is_available, torch.cuda.device_count = is_available, device_count
    saved = os.environ.get("JE_ARROW_MALLOC_CONF")
    if saved is None:
        os.environ["JE_ARROW_MALLOC_CONF"] = "background_thread:false"
    try:
        for name in json.loads(modules):
            if name.endswith("?"):
                name = name[:-1]
                try:
                    if importlib.util.find_spec(name) is None:
                        continue
                except (ImportError, ValueError, AttributeError):
                    continue
            importlib.import_module(name)
    finally:
        # What a module kept of the two answers the machine's own from now on.
        importing[0] = False
        torch.cuda.is_available, torch.cuda.device_count = originals
        if saved is None:
            os.environ.pop("JE_ARROW_MALLOC_CONF", None)
    if cuda_initialised():
        raise RuntimeError("importing them initialised CUDA in the interpreter: a worker forked from it could not use the device")
    return json.dumps({"import_s": time.time() - began})

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

def call(fn, takes_out, inputs, outputs, attrs, positional, stream, names, Tensor=None, from_dlpack=None, data_ptr=None, is_contiguous=None,
         contiguous=None, resolve_conj=None, resolve_neg=None, type=type, len=len, tuple=tuple, list=list, zip=zip,
         enumerate=enumerate, nowhere=None, isinstance=isinstance, gradients=None, enable_grad=None, grad=None):
    """One call: returns None (the outputs written in place), or the pointers to copy from and
    the tensors that hold them (kept by the bridge until the copy is made). `names`: None, or a
    backward taken through autograd from the forward `fn` (_gradients)."""
    ins = [from_dlpack(c) for c in inputs]
    outs = [from_dlpack(c) for c in outputs]
    with (_place(stream) if stream else nowhere):
        if names is not None:
            got = gradients(fn, takes_out, ins, attrs, positional, names, Tensor, enable_grad, grad)
        else:
            if positional:
                for at, value in positional:
                    ins.insert(at, value)
            if takes_out:
                fn(*ins, out=outs[0] if len(outs) == 1 else tuple(outs), **attrs)
                return None
            got = fn(*ins, **attrs)
        if type(got) is Tensor or isinstance(got, Tensor):
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

def _gradients(fn, takes_out, ins, attrs, positional, names, Tensor, enable_grad, grad):
    """A backward call answered by PyTorch's autograd from the forward `fn`: the call's inputs are
    the forward's (the leading ones) and the gradient of each forward output (the trailing
    grad_<output> ones); its outputs grad_<input>. The forward runs on the forward inputs, its
    differentiable ones made leaves that require gradients, and torch.autograd.grad takes each
    output's gradient back to them: inside the call, so the forward's own time is part of this
    backward's (its graph reads this call's inputs). `names`: (input names, output names, the
    function to define instead)."""
    in_names, out_names, instead = names
    n = len(ins)
    while n and in_names[n - 1].startswith("grad_"):
        n -= 1
    forward = [t.detach() for t in ins[:n]]
    seeds = ins[n:]
    wrt = []
    for name in out_names:
        x = name[5:] if name.startswith("grad_") else name
        if x not in in_names[:n]:
            raise TypeError("%s is the gradient of no input of the forward (%s)" % (name, ", ".join(in_names[:n])))
        k = in_names.index(x)
        if not forward[k].requires_grad:
            forward[k].requires_grad_(True)
        wrt.append(forward[k])
    if takes_out:
        raise NotImplementedError("its forward writes into out=, which PyTorch cannot differentiate: define %s" % instead)
    args = list(forward)
    if positional:
        for at, value in positional:
            args.insert(at, value)
    with enable_grad():
        got = fn(*args, **attrs)
    if isinstance(got, Tensor):
        got = (got,)
    got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
    if len(got) != len(seeds):
        raise TypeError("its forward returned %d value(s); the backward has the gradients of %d output(s) (%s)"
                        % (len(got), len(seeds), ", ".join(in_names[n:])))
    pairs = [(g, s) for g, s in zip(got, seeds) if isinstance(g, Tensor) and g.requires_grad]
    if not pairs:
        raise NotImplementedError("its forward is not differentiable by PyTorch (its outputs carry no autograd graph, as a Triton "
                                  "or C++ kernel's do not): define %s, or wrap the kernel in a torch.autograd.Function" % instead)
    found = grad([g for g, _ in pairs], wrt, grad_outputs=[s for _, s in pairs], allow_unused=True)
    return tuple(w.new_zeros(w.shape) if g is None else g.detach() for g, w in zip(found, wrt))

# ---- BackendBench-py folders: gen_input.py made into a manifest (docs/PYTHON.md) --------------

def _shim():
    """BackendBench-py's Test, where BackendBench itself is not installed: gen_input.py imports it."""
    try:
        import BackendBench.suite.base  # noqa: F401
        return
    except ImportError:
        pass
    import types
    class Test:
        def __init__(self, *args, **kwargs):
            self._args = args
            self._kwargs = kwargs
        @property
        def args(self):
            return [a() if callable(a) else a for a in self._args]
        @property
        def kwargs(self):
            return {k: v() if callable(v) else v for k, v in self._kwargs.items()}
    root, suite, base = types.ModuleType("BackendBench"), types.ModuleType("BackendBench.suite"), types.ModuleType("BackendBench.suite.base")
    base.Test = Test
    root.suite, suite.base = suite, base
    root.__path__, suite.__path__ = [], []
    sys.modules.update({"BackendBench": root, "BackendBench.suite": suite, "BackendBench.suite.base": base})

def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

def _unpack(test, where):
    """A test's positional and keyword values: a Test (.args, .kwargs), or a tuple of values
    (callables called) whose last element may be a dict of keyword values."""
    if hasattr(test, "args") and hasattr(test, "kwargs") and not isinstance(test, (tuple, list)):
        return list(test.args), dict(test.kwargs)
    if isinstance(test, (tuple, list)):
        items = list(test)
        kwargs = items.pop() if items and isinstance(items[-1], dict) else {}
        value = lambda v: v() if callable(v) else v
        return [value(v) for v in items], {k: value(v) for k, v in kwargs.items()}
    if callable(test):
        return [test()], {}
    raise TypeError("%s: a test is a Test, a tuple of callables (the last may be a dict of keyword callables) or a callable; got %s"
                    % (where, type(test).__name__))

_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "bfloat16", "int8": "int8",
           "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool"}

def _attr_type(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)) and v and all(isinstance(e, int) and not isinstance(e, bool) for e in v):
        return "int_list"
    if isinstance(v, (list, tuple)) and v and all(isinstance(e, (int, float)) and not isinstance(e, bool) for e in v):
        return "float_list"
    return None

def generate(gen_path, candidates, op, seed, out_dir):
    """Runs gen_input.py's get_correctness_tests() and get_performance_tests(), each test's values
    drawn under torch.manual_seed(seed + its place); writes its tensors (data/*.npy) and a manifest
    (gen_input.yaml, JSON) into out_dir: positional tensors are the inputs arg<i>, positional
    scalars the attributes _pos<i> (passed in their place), keyword scalars attributes of their
    name; the outputs are what the reference (or the first implementation) returns."""
    import torch
    import numpy
    _shim()
    folder = os.path.dirname(os.path.abspath(gen_path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    gen = _import(gen_path, "_backendbench_gen_input")
    oracle = None
    for path in json.loads(candidates):
        module = _import(path, "_backendbench_oracle_" + os.path.splitext(os.path.basename(path))[0])
        fn = getattr(module, op + "_reference", None) or getattr(module, op + "_kernel_impl", None)
        if callable(fn):
            oracle = (path, fn)
            break
    if oracle is None:
        raise RuntimeError("%s: no Python reference or implementation in the folder returns the outputs' shapes; add %s_reference.py"
                           % (gen_path, op))
    groups = []
    for kind, getter in (("correctness", "get_correctness_tests"), ("performance", "get_performance_tests")):
        get = getattr(gen, getter, None)
        if get is None:
            if kind == "correctness":
                raise RuntimeError("%s: defines no get_correctness_tests()" % gen_path)
            continue
        groups.append((kind, list(get())))
    os.makedirs(os.path.join(out_dir, "data"), exist_ok=True)
    arity, attrs, devices, tests = None, {}, set(), {"correctness": [], "performance": []}
    n = 0
    for kind, listed in groups:
        for k, test in enumerate(listed):
            where = "%s: %s test %d" % (gen_path, kind, k)
            torch.manual_seed(seed + n)
            n += 1
            args, kwargs = _unpack(test, where)
            tensor_at = [i for i, v in enumerate(args) if isinstance(v, torch.Tensor)]
            if arity is None:
                arity = (len(args), tensor_at)
            elif arity != (len(args), tensor_at):
                raise RuntimeError("%s: %d values, tensors at %s; the first test had %d, tensors at %s (every test must pass "
                                   "tensors in the same places)" % (where, len(args), tensor_at, arity[0], arity[1]))
            if not tensor_at:
                raise RuntimeError("%s: no tensor among the positional values" % where)
            case = {"name": "test_%d" % k, "inputs": {}, "outputs": {}, "attributes": {}}
            dev = None
            for i, v in enumerate(args):
                if isinstance(v, torch.Tensor):
                    dtype = _DTYPES.get(str(v.dtype).replace("torch.", ""))
                    if dtype is None:
                        raise RuntimeError("%s: argument %d is a %s tensor, a dtype BackendBench does not hold" % (where, i, v.dtype))
                    if dev is not None and v.device.type != dev:
                        raise RuntimeError("%s: tensors on %s and %s" % (where, dev, v.device.type))
                    dev = v.device.type
                    name = "data/%s_%d_arg%d.npy" % (kind, k, i)
                    data = v.detach().contiguous().cpu()
                    numpy.save(os.path.join(out_dir, name), (data.float() if v.dtype == torch.bfloat16 else data).numpy())
                    case["inputs"]["arg%d" % i] = {"shape": list(v.shape), "dtype": dtype, "init": {"npy": name}}
                else:
                    case["attributes"]["_pos%d" % i] = list(v) if isinstance(v, tuple) else v
            for key, v in kwargs.items():
                if isinstance(v, torch.Tensor):
                    raise RuntimeError("%s: keyword '%s' is a tensor; tensors must be positional" % (where, key))
                case["attributes"][key] = list(v) if isinstance(v, tuple) else v
            for key, v in case["attributes"].items():
                t = _attr_type(v)
                if t is None:
                    raise RuntimeError("%s: '%s' is %r, which BackendBench passes as no attribute (a bool, int, float, string or "
                                       "a list of numbers)" % (where, key, v))
                if attrs.setdefault(key, t) != t:
                    if {attrs[key], t} == {"int", "float"} or {attrs[key], t} == {"int_list", "float_list"}:
                        attrs[key] = "float" if "float" in (attrs[key], t) else "float_list"
                    else:
                        raise RuntimeError("%s: '%s' is a %s here and a %s before" % (where, key, t, attrs[key]))
            got = oracle[1](*args, **kwargs)
            if isinstance(got, torch.Tensor):
                got = (got,)
            if not isinstance(got, (tuple, list)) or not got or not all(isinstance(g, torch.Tensor) for g in got):
                raise RuntimeError("%s: %s returned %s, not a tensor or a tuple of tensors" % (where, oracle[0], type(got).__name__))
            for j, g in enumerate(got):
                dtype = _DTYPES.get(str(g.dtype).replace("torch.", ""))
                if dtype is None:
                    raise RuntimeError("%s: output %d of %s is a %s tensor" % (where, j, oracle[0], g.dtype))
                case["outputs"]["out%d" % j] = {"shape": list(g.shape), "dtype": dtype}
            if tests.get("_count") not in (None, len(got)):
                raise RuntimeError("%s: %d outputs; earlier tests had %d" % (where, len(got), tests["_count"]))
            tests["_count"] = len(got)
            case["devices"] = [dev]
            devices.add(dev)
            tests[kind].append(case)
    if not tests["correctness"] and not tests["performance"]:
        raise RuntimeError("%s: returned no tests" % gen_path)
    first = arity[1][0]
    count = tests.pop("_count")
    try:
        parameters = inspect.signature(oracle[1]).parameters
    except (TypeError, ValueError):
        parameters = {}
    defaults = {}
    for cases in tests.values():
        for case in cases:
            for key in attrs:
                if key in case["attributes"]:
                    continue
                p = parameters.get(key)
                if p is None or p.default is inspect.Parameter.empty or _attr_type(p.default) is None:
                    raise RuntimeError("%s: test %s gives no '%s', which another test gives, and %s has no default for it"
                                       % (gen_path, case["name"], key, oracle[0]))
                defaults[key] = list(p.default) if isinstance(p.default, tuple) else p.default
            if not case["attributes"]:
                del case["attributes"]
    manifest = {
        "op": op,
        "description": "made by BackendBench from %s (its tests, in order)" % gen_path,
        "seed": seed,
        "devices": sorted(devices),
        "inputs": [{"name": "arg%d" % i} for i in arity[1]],
        "outputs": [{"name": "out%d" % j, "shape": "arg%d" % first, "dtype": "arg%d" % first} for j in range(count)],
        "tests": {k: v for k, v in tests.items() if v},
    }
    if os.path.basename(oracle[0]) == op + "_reference.py" and callable(getattr(sys.modules.get(
            "_backendbench_oracle_" + op + "_reference"), op + "_reference", None)):
        manifest["reference"] = op + "_reference.py"  # BackendBench-py's precedence: <op>_reference.py first
    if attrs:
        manifest["attributes"] = [dict({"name": key, "type": t}, **({"default": defaults[key]} if key in defaults else {}))
                                  for key, t in attrs.items()]
    with open(os.path.join(out_dir, "gen_input.yaml"), "w") as f:
        json.dump(manifest, f, indent=1)

def error_text(kind, value, trace):
    return "".join(traceback.format_exception(kind, value, trace)).rstrip()
)PY";

PyObject* g_glue = nullptr;
PyObject* g_call = nullptr;           // the glue's call, taken before any implementation is imported
PyObject* g_call_code = nullptr;      // ... and what it runs: an implementation that rewrites it is refused
PyObject* g_call_defaults = nullptr;  // ... with the values it uses (PyTorch's own functions, taken at start)
PyObject* g_gradients = nullptr;      // the glue's _gradients (one of those values), and what it runs
PyObject* g_gradients_code = nullptr;
bool g_ready = false;
std::string g_start_error;

struct Bound {
  PyObject* fn = nullptr;
  bool takes_out = false;
  PyObject* autograd = nullptr;  // a backward taken through autograd from the forward `fn`: the function to define instead
};
constexpr int kSlots = 32;  // four a file: its forward, its reference, and their backward passes
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

// The interpreter and its glue, once, nothing imported besides (the survey's reading of files
// needs no more). Called without the GIL; returns with it released.
bool start_glue(std::string& error) {
  if (g_glue) return true;
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
  PyEval_SaveThread();
  return true;
}

// Starts the interpreter once: its glue, the packages of the interpreter the host names
// (BB_PYTHON_ENV) or of `python3` on the PATH, and PyTorch. Called without the GIL.
bool start_python(std::string& error) {
  if (g_ready) return true;
  if (!start_glue(error)) return false;
  if (!g_start_error.empty()) {
    error = g_start_error;
    return false;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  const char* python = std::getenv(BB_PYTHON_ENV);
  const char* site = std::getenv(BB_PYTHON_SITE_ENV);
  PyObject* call = PyObject_CallMethod(g_glue, "start", "sOs", python ? python : "", python && *python ? Py_True : Py_False, site ? site : "");
  if (!call || !PyFunction_Check(call)) {
    g_start_error = error = take_error();
    Py_XDECREF(call);
    PyGILState_Release(gil);
    return false;
  }
  g_call = call;
  g_call_code = PyFunction_GetCode(call);
  g_call_defaults = PyFunction_GetDefaults(call);
  Py_XINCREF(g_call_code);
  Py_XINCREF(g_call_defaults);
  g_gradients = PyObject_GetAttrString(g_glue, "_gradients");
  g_gradients_code = g_gradients && PyFunction_Check(g_gradients) ? PyFunction_GetCode(g_gradients) : nullptr;
  Py_XINCREF(g_gradients_code);
  PyErr_Clear();
  g_ready = true;
  PyGILState_Release(gil);  // calls take the GIL where they run
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
  if (PyFunction_GetCode(g_call) != g_call_code || PyFunction_GetDefaults(g_call) != g_call_defaults ||
      (g_gradients && PyFunction_GetCode(g_gradients) != g_gradients_code)) {
    write_message("the implementation changed BackendBench's Python glue (the code or the bound values of the function that calls it, "
                  "or the code of the one that takes a forward's gradients): refused",
                  call->error, call->error_capacity);
    PyGILState_Release(gil);
    return BB_ERR_GENERIC;
  }
  PyObject* inputs = PyList_New(call->num_inputs);
  PyObject* outputs = PyList_New(call->num_outputs);
  PyObject* attrs = PyDict_New();
  PyObject* positional = nullptr;  // attributes _pos<i>: a value passed at place i among the tensors (BackendBench-py tests)
  for (int32_t k = 0; k < call->num_inputs; ++k) PyList_SET_ITEM(inputs, k, capsule_of(call->inputs[k]));
  for (int32_t k = 0; k < call->num_outputs; ++k) PyList_SET_ITEM(outputs, k, capsule_of(call->outputs[k]));
  for (int32_t k = 0; k < call->num_attrs; ++k) {
    PyObject* v = attr_value(call->attrs[k]);
    const char* name = call->attrs[k].name;
    if (std::strncmp(name, "_pos", 4) == 0 && name[4] >= '0' && name[4] <= '9') {
      if (!positional) positional = PyList_New(0);
      PyObject* pair = Py_BuildValue("(lO)", std::atol(name + 4), v);
      PyList_Append(positional, pair);
      Py_XDECREF(pair);
    } else {
      PyDict_SetItemString(attrs, name, v);
    }
    Py_XDECREF(v);
  }
  if (positional) PyList_Sort(positional);
  PyObject* stream = PyLong_FromVoidPtr(call->stream);
  // A backward through autograd: the names say which inputs are the forward's and which the
  // gradients of its outputs (grad_<output>), and of which input each output is the gradient.
  PyObject* names = Py_None;
  if (b.autograd) {
    PyObject* in_names = PyList_New(call->num_inputs);
    PyObject* out_names = PyList_New(call->num_outputs);
    for (int32_t k = 0; k < call->num_inputs; ++k)
      PyList_SET_ITEM(in_names, k, PyUnicode_FromString(call->input_names && call->input_names[k] ? call->input_names[k] : ""));
    for (int32_t k = 0; k < call->num_outputs; ++k)
      PyList_SET_ITEM(out_names, k, PyUnicode_FromString(call->output_names && call->output_names[k] ? call->output_names[k] : ""));
    names = PyTuple_Pack(3, in_names, out_names, b.autograd);
    Py_DECREF(in_names);
    Py_DECREF(out_names);
  } else {
    Py_INCREF(names);
  }
  PyObject* r = PyObject_CallFunctionObjArgs(g_call, b.fn, b.takes_out ? Py_True : Py_False, inputs, outputs, attrs,
                                             positional ? positional : Py_None, stream, names, nullptr);
  Py_XDECREF(names);
  Py_XDECREF(positional);
  int status = BB_OK;
  if (!r) {
    // NotImplementedError says the case is not supported (BB_ERR_UNSUPPORTED: SKIPPED, with its
    // message); any other exception is an error with its traceback.
    const bool unsupported = PyErr_ExceptionMatches(PyExc_NotImplementedError);
    std::string message;
    if (unsupported) {
      PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
      PyErr_Fetch(&type, &value, &trace);
      PyObject* text = value ? PyObject_Str(value) : nullptr;
      const char* utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
      message = utf8 && *utf8 ? utf8 : "NotImplementedError";
      Py_XDECREF(text);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(trace);
      PyErr_Clear();
    } else {
      message = take_error();
    }
    write_message(message, call->error, call->error_capacity);
    status = unsupported ? BB_ERR_UNSUPPORTED : BB_ERR_GENERIC;
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
template <std::size_t... K>
constexpr std::array<bb_kernel_fn, kSlots> trampolines(std::index_sequence<K...>) {
  return {trampoline<static_cast<int>(K)>...};
}
constexpr std::array<bb_kernel_fn, kSlots> kFns = trampolines(std::make_index_sequence<kSlots>());

// Binds (fn, takes_out) to the next trampoline. Called with the GIL held.
bb_kernel_fn bind(PyObject* pair, std::string& error) {
  if (pair == Py_None) return nullptr;
  if (g_used == kSlots) {
    error = "too many Python functions loaded in one worker";
    return nullptr;
  }
  PyObject* fn = PyTuple_GetItem(pair, 0);
  Py_INCREF(fn);
  PyObject* autograd = PyTuple_Size(pair) > 2 ? PyTuple_GetItem(pair, 2) : nullptr;
  if (autograd == Py_None) autograd = nullptr;
  Py_XINCREF(autograd);
  g_bound[g_used] = {fn, PyObject_IsTrue(PyTuple_GetItem(pair, 1)) == 1, autograd};
  return kFns[g_used++];
}

int load(const char* file, const char* op, bb_kernel_fn* kernel_impl, bb_kernel_fn* reference, bb_kernel_fn* backward_impl,
         bb_kernel_fn* backward_reference, char* info, size_t info_capacity, char* error, size_t error_capacity) {
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
    *backward_impl = bind(PyTuple_GetItem(r, 3), why);
    *backward_reference = bind(PyTuple_GetItem(r, 4), why);
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

int generate(const char* gen_input, const char* candidates, const char* op, uint64_t seed, const char* out_dir, char* error,
             size_t error_capacity) {
  std::string why;
  if (!start_python(why)) {
    write_message(why, error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* r = PyObject_CallMethod(g_glue, "generate", "sssKs", gen_input, candidates, op, static_cast<unsigned long long>(seed), out_dir);
  const int status = r ? 0 : 1;
  if (!r) write_message(take_error(), error, error_capacity);
  Py_XDECREF(r);
  PyGILState_Release(gil);
  return status;
}

// A glue function's string result `r` (taken) into `out`: 0; or nonzero with why in `error` (its
// exception, or `what` not fitting). The GIL held.
int text_answer(PyObject* r, const char* what, char* out, size_t out_capacity, char* error, size_t error_capacity) {
  int status = 1;
  if (!r) {
    write_message(take_error(), error, error_capacity);
  } else if (const char* text = PyUnicode_AsUTF8(r); text && std::strlen(text) < out_capacity) {
    write_message(text, out, out_capacity);
    status = 0;
  } else {
    PyErr_Clear();
    write_message(std::string(what) + " does not fit", error, error_capacity);
  }
  Py_XDECREF(r);
  return status;
}

int survey(const char* files, const char* op, char* out, size_t out_capacity, char* error, size_t error_capacity) {
  std::string why;
  if (!start_python(why)) {
    write_message(why, error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  const int status = text_answer(PyObject_CallMethod(g_glue, "survey", "ss", files, op), "the survey's answer", out, out_capacity, error, error_capacity);
  PyGILState_Release(gil);
  return status;
}

int read(const char* files, char* out, size_t out_capacity, char* error, size_t error_capacity) {
  std::string why;
  if (!start_glue(why)) {
    write_message(why, error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  const int status =
      text_answer(PyObject_CallMethod(g_glue, "read_definitions", "s", files), "the files' reading", out, out_capacity, error, error_capacity);
  PyGILState_Release(gil);
  return status;
}

int start(char* error, size_t error_capacity) {
  std::string why;
  if (!start_python(why)) {
    write_message(why, error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* r = PyObject_CallMethod(g_glue, "preload", nullptr);
  Py_XDECREF(r);
  PyErr_Clear();
  PyGILState_Release(gil);
  return 0;
}

PyGILState_STATE g_fork_gil;

void before_fork() {
  if (!g_ready) return;
  g_fork_gil = PyGILState_Ensure();
  PyOS_BeforeFork();
}

void after_fork(int child) {
  if (!g_ready) return;
  if (child)
    PyOS_AfterFork_Child();
  else
    PyOS_AfterFork_Parent();
  PyGILState_Release(g_fork_gil);
}

int become_worker(const char* environment, char* error, size_t error_capacity) {
  if (!g_ready) {
    write_message("the interpreter was not started", error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* r = PyObject_CallMethod(g_glue, "become_worker", "s", environment);
  const int status = r ? 0 : 1;
  if (!r) write_message(take_error(), error, error_capacity);
  Py_XDECREF(r);
  PyGILState_Release(gil);
  return status;
}

int package_path(char* out, size_t out_capacity) {
  if (!g_ready) return 1;
  PyGILState_STATE gil = PyGILState_Ensure();
  int status = 1;
  if (PyObject* r = PyRun_String("__import__('json').dumps(__import__('sys').path)", Py_eval_input, PyModule_GetDict(g_glue), PyModule_GetDict(g_glue))) {
    if (const char* text = PyUnicode_AsUTF8(r); text && std::strlen(text) < out_capacity) {
      write_message(text, out, out_capacity);
      status = 0;
    }
    Py_DECREF(r);
  }
  PyErr_Clear();
  PyGILState_Release(gil);
  return status;
}

int library(const char* function, const char* argument, char* out, size_t out_capacity, char* error, size_t error_capacity) {
  if (!g_ready) {
    write_message("the interpreter was not started", error, error_capacity);
    return 1;
  }
  if (std::strcmp(function, "scan_imports") != 0 && std::strcmp(function, "preimport") != 0) {
    write_message(std::string("no library function ") + function, error, error_capacity);
    return 1;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  const int status = text_answer(PyObject_CallMethod(g_glue, function, "s", argument), "the answer", out, out_capacity, error, error_capacity);
  PyGILState_Release(gil);
  return status;
}

const bb_python_bridge kBridge = {sizeof(bb_python_bridge), BB_PYTHON_BRIDGE_VERSION, load,        returned,   release,       compile_seconds, generate,
                                  survey,                   start,                   before_fork, after_fork, become_worker, package_path, library,
                                  read};

}  // namespace

extern "C" __attribute__((visibility("default"))) const bb_python_bridge* backendbench_python_bridge(void) { return &kBridge; }
