"""The engine: kernel cache, compiler and loaded modules (flashjit::Engine through the C ABI).

Ops use a process-wide default engine, created on first use from the FLASHJIT_* environment
(FLASHJIT_CACHE_DIR, FLASHJIT_ARCH, FLASHJIT_DRY_RUN, ...). `set_default_engine()` replaces it.
An Engine also carries the CLI's cache and bundle commands.
"""

import ctypes
import json
import threading

from . import _lib
from .errors import InvalidHandleError

_lib_c = _lib.lib


def _b(s):
    return None if s is None else str(s).encode()


class Engine:
    """flashjit::Engine. Options as in flashjit_engine_options (None: defaults/environment)."""

    def __init__(self, cache_dir=None, disable_cache=False, bundles=None, arch=None,
                 cuda_include_dir=None, disable_jit=False, always_compile=False, dump_dir=None,
                 dry_run=False, compile_wait_ms=None, trusted_bundle_keys=None,
                 require_signed_bundles=False, read_environment=True):
        o = _lib.EngineOptions()
        _lib_c.flashjit_engine_options_init(ctypes.byref(o))
        o.cache_dir = _b(cache_dir)
        o.disable_cache = int(bool(disable_cache))
        o.bundles = _b(":".join(bundles) if isinstance(bundles, (list, tuple)) else bundles)
        o.arch = _b(arch)
        o.cuda_include_dir = _b(cuda_include_dir)
        o.disable_jit = int(bool(disable_jit))
        o.always_compile = int(bool(always_compile))
        o.dump_dir = _b(dump_dir)
        o.dry_run = int(bool(dry_run))
        if compile_wait_ms is not None:
            o.compile_wait_ms = int(compile_wait_ms)
        o.trusted_bundle_keys = _keys(trusted_bundle_keys)
        o.require_signed_bundles = int(bool(require_signed_bundles))
        o.read_environment = int(bool(read_environment))
        h = ctypes.c_void_p()
        rc = _lib_c.flashjit_engine_create(ctypes.byref(o), ctypes.byref(h))
        if rc:
            _lib.raise_error(rc)
        self._handle = h.value

    @property
    def handle(self):
        if self._handle is None:
            raise InvalidHandleError("flashjit: this Engine was closed")
        return self._handle

    def close(self):
        """Destroys the engine; later calls raise InvalidHandleError."""
        if self._handle is not None:
            _lib_c.flashjit_engine_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- configuration and building ----
    def show_config(self):
        """The resolved configuration (flashjit show-config --json) as a dict."""
        return json.loads(_lib.call_json(_lib_c.flashjit_engine_show_config, self.handle))

    def stats(self):
        s = _lib.EngineStats()
        rc = _lib_c.flashjit_engine_get_stats(self.handle, ctypes.byref(s))
        if rc:
            _lib.raise_error(rc)
        return {name: getattr(s, name) for name, _ in s._fields_}

    def render(self, spec):
        """The generated translation unit of one spec (a dict or JSON text)."""
        return _lib.call_json(_lib_c.flashjit_engine_render, self.handle, _spec(spec))

    def build(self, spec, arch=None):
        """Finds or compiles one spec into the cache; returns the kernel info dict."""
        text, _ = _lib.call_json_once(_lib_c.flashjit_engine_build, self.handle, _spec(spec),
                                      _b(arch))
        return json.loads(text)

    # ---- cache ----
    def cache_ls(self):
        return json.loads(_lib.call_json(_lib_c.flashjit_cache_ls, self.handle))

    def cache_verify(self, repair=False):
        n = [ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()]
        text, _ = _lib.call_json_once(_lib_c.flashjit_cache_verify, self.handle,
                                      int(bool(repair)), *[ctypes.byref(x) for x in n])
        return json.loads(text)

    def cache_gc(self, max_bytes):
        """Evicts least-recently-used kernels down to max_bytes; returns the number evicted."""
        evicted = ctypes.c_int64()
        rc = _lib_c.flashjit_cache_gc(self.handle, int(max_bytes), ctypes.byref(evicted))
        if rc:
            _lib.raise_error(rc)
        return evicted.value

    def cache_prune(self):
        """Removes the kernels this library can never serve (other library, template or NVRTC
        versions; other archs stay); returns the number removed."""
        removed = ctypes.c_int64()
        rc = _lib_c.flashjit_cache_prune(self.handle, ctypes.byref(removed))
        if rc:
            _lib.raise_error(rc)
        return removed.value

    def cache_clear(self):
        rc = _lib_c.flashjit_cache_clear(self.handle)
        if rc:
            _lib.raise_error(rc)

    # ---- bundles ----
    def bundle_export(self, arch, path, sign_key_pem=None):
        text, _ = _lib.call_json_once(_lib_c.flashjit_bundle_export, self.handle, _b(arch),
                                      _b(path), _b(sign_key_pem))
        return json.loads(text)

    def bundle_import(self, path, arch=None):
        """Returns the number of kernels added to the cache."""
        added = ctypes.c_int64()
        rc = _lib_c.flashjit_bundle_import(self.handle, _b(path), _b(arch), ctypes.byref(added))
        if rc:
            _lib.raise_error(rc)
        return added.value

    @staticmethod
    def bundle_inspect(path, trusted_bundle_keys=None, require_signed_bundles=False):
        """The bundle's manifest and kernel list, with "ok" and "check" (never imports).
        trusted_bundle_keys: Ed25519 public key PEM files (a list or a ':'-separated string)
        whose signatures are verified; require_signed_bundles: an unsigned bundle is not ok.
        The environment is not read. An unreadable key file raises."""
        if trusted_bundle_keys is None and not require_signed_bundles:
            return json.loads(_lib.call_json(_lib_c.flashjit_bundle_inspect, _b(path)))
        return json.loads(_lib.call_json(_lib_c.flashjit_bundle_inspect_trusted, _b(path),
                                         _keys(trusted_bundle_keys),
                                         int(bool(require_signed_bundles))))


def _keys(keys):
    """A list/tuple of paths, or a ':'-separated string, as the C ABI's ':'-list."""
    if keys is None:
        return None
    if isinstance(keys, (list, tuple)):
        keys = ":".join(str(k) for k in keys)
    return _b(keys)


def _spec(spec):
    if isinstance(spec, (dict, list)):
        spec = json.dumps(spec)
    return _b(spec)


def spec_ops():
    """Every op and spec field this build knows (flashjit spec-ops --json)."""
    return json.loads(_lib.call_json(_lib_c.flashjit_spec_ops))


def bundle_inspect(path, trusted_bundle_keys=None, require_signed_bundles=False):
    """See Engine.bundle_inspect."""
    return Engine.bundle_inspect(path, trusted_bundle_keys, require_signed_bundles)


def bundle_keygen(private_pem, public_pem):
    """Writes a new Ed25519 signing key pair (private_pem mode 0600, never overwritten;
    public_pem for trusted_bundle_keys) and returns its key id."""
    return _lib.call_json_once(_lib_c.flashjit_bundle_keygen, _b(private_pem),
                               _b(public_pem), size=64)[0]


_default = None
_default_lock = threading.Lock()


def get_default_engine():
    """The engine the ops use (created from the environment on first use)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Engine()
    return _default


def set_default_engine(engine):
    """Makes `engine` (an Engine, or None to recreate from the environment) the ops' engine."""
    global _default
    with _default_lock:
        _default = engine


def handle():
    """The default engine's C handle (the ops' fast path)."""
    e = _default
    if e is None:
        e = get_default_engine()
    return e.handle
