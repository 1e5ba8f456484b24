"""Loads libmarg.so with Python ctypes in a process that has already imported
numpy (whose own libraries take static TLS first, as in a real session), and
computes one convolution through the C API against numpy's float64 one.
usage: python3 load_ctypes.py PATH-TO-libmarg.so"""
import ctypes
import sys

import numpy as np

lib = ctypes.CDLL(sys.argv[1])
lib.marg_version.restype = ctypes.c_char_p
dp = ctypes.POINTER(ctypes.c_double)
lib.marg_convolve_f64.argtypes = [ctypes.c_int, ctypes.c_int, dp, ctypes.c_int, dp,
                                  ctypes.c_int, dp, ctypes.c_int, ctypes.c_void_p]
rng = np.random.default_rng(7)
p = rng.random(37)
q = rng.random(11)
r = np.empty(p.size + q.size - 1)
status = lib.marg_convolve_f64(p.size, q.size, p.ctypes.data_as(dp), 1, q.ctypes.data_as(dp), 1,
                               r.ctypes.data_as(dp), 1, None)
want = np.convolve(p, q)
err = float(np.max(np.abs(r - want) / want))
print(f"ctypes {sys.argv[1]} (libmarg {lib.marg_version().decode()}, numpy {np.__version__}): "
      f"status {status}, max relative error {err:.3g}")
sys.exit(0 if status == 0 and err < 1e-13 else 1)
