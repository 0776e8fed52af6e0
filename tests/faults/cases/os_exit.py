import os


def f(x):
    os._exit(7)
