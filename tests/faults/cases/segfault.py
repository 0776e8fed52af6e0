import ctypes


def f(x):
    return ctypes.string_at(0)
