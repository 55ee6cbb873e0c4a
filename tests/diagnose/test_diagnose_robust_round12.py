"""Programs that do unusual things (issue 11, round 12): each test is a difference between a
program's plain run and its run under diagnose, found by bench/robust_programs.py's round 12
rows or by hand."""

from __future__ import annotations

import zipfile
from textwrap import dedent

from robust_programs_helper import plain_and_diagnosed_target


def test_a_module_or_folder_run_keeps_the_frames_python_shows(tmp_path):
    # `python -m pkg.train` and `python folder` start the traceback with runpy's frozen frames
    # (`_run_module_as_main`, `_run_code`); diagnose took out every runpy frame, and with them
    # those of the program's own `runpy.run_path` call. A folder's sys.argv[0] was made absolute.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(
        dedent(
            """
            import runpy
            runpy.run_path("config_script.py")
            """
        )
    )
    (tmp_path / "config_script.py").write_text("raise ValueError('bad config')\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "__main__.py").write_text(
        "import sys\nprint(sys.argv)\nraise KeyError('folder')\n"
    )
    with zipfile.ZipFile(tmp_path / "app.zip", "w") as app:  # a zip app: sys.path[0] is the zip
        app.writestr("__main__.py", "import sys\nprint(sys.argv)\nraise KeyError('zip')\n")
    for target in (("-m", "pkg.train"), ("folder",), ("app.zip",)):
        plain, diagnosed = plain_and_diagnosed_target(tmp_path, *target)
        assert plain.returncode == diagnosed.returncode == 1, diagnosed.stderr
        assert "<frozen runpy>" in plain.stderr
        if target != ("app.zip",):  # Python prints no source line from a zip; linecache does
            assert diagnosed.stderr == plain.stderr
        assert _frames(diagnosed.stderr) == _frames(plain.stderr), diagnosed.stderr
        assert diagnosed.stdout.startswith(plain.stdout)


def _frames(stderr: str) -> list[str]:
    return [
        line for line in stderr.splitlines() if line.startswith(("  File", "Traceback", "KeyError"))
    ]


def test_a_tight_recursion_limit_holds_from_the_programs_own_first_frame(tmp_path):
    # Python counts every frame, and under diagnose the program runs below ours (the CLI, the
    # runner) with one frame more per nested module call (torch's path with global hooks): a
    # program that set sys.setrecursionlimit(120) for a 25-level recursive model and an 80-deep
    # function got a RecursionError under diagnose only.
    (tmp_path / "train.py").write_text(
        dedent(
            """
            import sys, torch
            torch.set_num_threads(1)
            opt_class = torch.optim.SGD  # torch's lazy imports are deep: done before the limit
            torch.optim.SGD(torch.nn.Linear(1, 1).parameters(), lr=0.1)
            sys.setrecursionlimit(120)
            class Tree(torch.nn.Module):
                def __init__(self, depth):
                    super().__init__()
                    self.leaf = torch.nn.Linear(4, 4)
                    self.child = Tree(depth - 1) if depth else None
                def forward(self, x):
                    return self.leaf(x) if self.child is None else self.child(x) + x
            tree = Tree(25)
            opt = opt_class(tree.parameters(), lr=0.01)
            for _ in range(5):
                opt.zero_grad(); tree(torch.randn(2, 4)).sum().backward(); opt.step()
            def down(n):
                return 0 if n == 0 else 1 + down(n - 1)
            def forever(n):
                return forever(n + 1)
            try:
                forever(0)
            except RecursionError:
                print("runaway recursion still stopped")
            print("deep", down(80), "limit", sys.getrecursionlimit())
            """
        )
    )
    plain, diagnosed = plain_and_diagnosed_target(tmp_path, "train.py")
    assert plain.returncode == 0 and plain.stdout.endswith("deep 80 limit 120\n"), plain.stderr
    assert diagnosed.returncode == 0, diagnosed.stderr[-2000:]
    assert diagnosed.stdout.startswith(plain.stdout), diagnosed.stdout[:500]


def test_a_package_whose_init_fails_is_the_programs_error_under_dash_m(tmp_path):
    # `diagnose -m pkg.train` looked the module up by importing `pkg` before the run: an error
    # in its __init__ was raised in our CLI, shown as our traceback (a torchdoctor bug by its
    # look), and what __init__ printed came before the run.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        "print('package init runs')\nraise RuntimeError('bad package init')\n"
    )
    (tmp_path / "pkg" / "train.py").write_text("print('never runs')\n")
    plain, diagnosed = plain_and_diagnosed_target(tmp_path, "-m", "pkg.train")
    assert plain.returncode == diagnosed.returncode == 1, diagnosed.stderr
    assert diagnosed.stderr == plain.stderr
    assert diagnosed.stdout.startswith("package init runs\ntorchdoctor diagnose")
