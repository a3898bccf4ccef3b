from asc_tui.operator import Launch

CASES = {"default": dict()}


def tensors(case):
    return {}


def tiling(case, p):
    return Launch(8, None)


def golden(case):
    return {}
