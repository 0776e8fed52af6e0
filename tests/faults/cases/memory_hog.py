"""Allocates host memory until the worker's memory cap stops it (64 MiB blocks, touched so they count)."""

import numpy as np


def f(x):
    blocks = []
    while True:
        blocks.append(np.ones(2**23))  # 64 MiB
    return x
