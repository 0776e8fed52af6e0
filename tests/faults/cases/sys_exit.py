import sys


def f(x):
    sys.exit(3)
