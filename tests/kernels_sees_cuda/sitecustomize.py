"""Put this folder first on PYTHONPATH with RELU_TEST_KERNELS_CUDA=12.8 (say), and in every
Python process of the run `kernels` takes torch's CUDA for 12.8 when it picks a variant:
the suite then tests a cu12x variant under a torch built for CUDA 13, the only torch >= 2.11
on the reachable registry (scripts/release.sh, scripts/h200_release.sh). Only kernels' backend
detection changes (kernels.backends._backend, which its resolver and `backend=` handling
call): torch, the CUDA runtime the process loads and the GPU are what they are.

RELU_TEST_KERNELS_XPU=2026.1 (say) instead: kernels takes torch for an XPU build of that
oneAPI version (backend xpu20261), whatever torch is; the torch-xpu variant then loads as on
an XPU torch (its ops on CPU tensors: no Intel GPU here). conftest tests that variant too
(target xpu-variant-on-cpu).

sitecustomize, not a conftest fixture: the tests that start a fresh interpreter (the
sys.path route, `kernels benchmark`, LOCAL_KERNELS in a subprocess) must see it too. kernels
is patched when first imported, so a process that never imports it pays nothing.
"""

import importlib.abc
import importlib.util
import os
import sys

_CUDA = os.environ.get("RELU_TEST_KERNELS_CUDA")
_XPU = os.environ.get("RELU_TEST_KERNELS_XPU")


class _PatchKernelsBackends(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "kernels.backends":
            return None
        sys.meta_path.remove(self)  # find the real module, once
        spec = importlib.util.find_spec(fullname)
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            detected = module._backend
            from packaging.version import Version

            def _backend():
                if _XPU:
                    return module.XPU(version=Version(_XPU))
                backend = detected()
                return module.CUDA(version=Version(_CUDA)) if backend.name == "cuda" else backend

            module._backend = _backend

        spec.loader.exec_module = exec_module
        return spec


if _CUDA or _XPU:
    sys.meta_path.insert(0, _PatchKernelsBackends())
