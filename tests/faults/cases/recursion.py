def f(x):
    return f(x) + 1
