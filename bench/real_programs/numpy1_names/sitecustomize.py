"""NumPy 1.x names that NumPy 2 removed (`np.Inf`, `np.NaN`, `np.float_` ...), for corpus rows
whose pinned commit predates NumPy 2 (Informer2020's and LTSF-Linear's EarlyStopping start from
`np.Inf`): run.py puts this folder on PYTHONPATH for the rows that name it in their env, as the
NumPy they were written for would have them. The program itself is not changed. The builtin
aliases (`np.int`, `np.float`, `np.bool`, `np.object`; NumPy 1.24 removed them) too: pytorch-fm's
MovieLens loader casts with `np.int`."""

import builtins

import numpy

for _old, _new in {"Inf": "inf", "Infinity": "inf", "PINF": "inf", "NaN": "nan", "NAN": "nan",
                   "float_": "float64", "complex_": "complex128", "unicode_": "str_"}.items():  # fmt: skip
    if _old not in vars(numpy):
        setattr(numpy, _old, getattr(numpy, _new))

for _old in ("int", "float", "bool", "object"):
    if _old not in vars(numpy):
        setattr(numpy, _old, getattr(builtins, _old))
