"""`lmdb` (not installed) for programs that import it at the top for data sets they are not run
on here (pytorch-fm's examples import its Avazu and Criteo loaders beside MovieLens): opening an
environment raises, as the missing package would have at import."""


def open(*args, **kwargs):  # noqa: A001 (lmdb's own name)
    raise ModuleNotFoundError("No module named 'lmdb' (import stub)")
