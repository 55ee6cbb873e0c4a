"""load_recipe: built-ins by name, user files by path, and clear errors for everything else."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from torchdoctor.errors import TorchdoctorError, UsageError
from torchdoctor.recipes import REGISTRY
from torchdoctor.recipes.base import Recipe
from torchdoctor.recipes.loading import load_recipe

GOOD_RECIPE = """
import torch
from torch import nn
from torchdoctor.recipes.base import Recipe

def recipe(lr=0.1, **options):
    data = torch.utils.data.TensorDataset(torch.randn(8, 3), torch.randint(0, 2, (8,)))
    return Recipe(name="{name}", model=nn.Linear(3, 2), train_data=data,
                  loss_fn=nn.CrossEntropyLoss(),
                  optimizer=lambda params: torch.optim.SGD(params, lr=lr),
                  defaults={{"epochs": 1}})
"""


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_registry_names():
    assert set(REGISTRY) == {"shapes", "cifar-resnet", "checkerboard"}


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(UsageError) as info:
        load_recipe("imagenet")
    message = str(info.value)
    assert "imagenet" in message
    assert all(name in message for name in REGISTRY)


def test_builtin_options_are_checked_and_converted():
    recipe = load_recipe("checkerboard", count="3", width="8")  # strings, as from a CLI
    assert isinstance(recipe, Recipe) and len(recipe.train_data) == 3
    assert recipe.classification is False
    with pytest.raises(UsageError, match="no option 'colour'"):
        load_recipe("checkerboard", colour="red")
    with pytest.raises(UsageError, match="not a valid int"):
        load_recipe("checkerboard", count="many")
    with pytest.raises(UsageError, match="crop must be between 1 and side=64"):
        load_recipe("checkerboard", crop=100)


def test_missing_file(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        load_recipe(str(tmp_path / "missing.py"))


def test_user_file_loads_with_options(tmp_path):
    path = write(tmp_path / "mine.py", GOOD_RECIPE.format(name="mine"))
    recipe = load_recipe(str(path), lr=0.5)
    assert recipe.name == "mine"
    assert recipe.optimizer(recipe.model.parameters()).defaults["lr"] == 0.5


def test_same_file_name_in_two_folders_does_not_collide(tmp_path):
    first = write(tmp_path / "a" / "recipe.py", GOOD_RECIPE.format(name="a"))
    second = write(tmp_path / "b" / "recipe.py", GOOD_RECIPE.format(name="b"))
    assert load_recipe(str(first)).name == "a"
    assert load_recipe(str(second)).name == "b"


def test_file_without_recipe_function(tmp_path):
    path = write(tmp_path / "plain.py", "x = 1\n")
    with pytest.raises(UsageError, match=r"does not define a function `recipe\(\*\*options\)`"):
        load_recipe(str(path))


def test_recipe_returning_something_else(tmp_path):
    path = write(tmp_path / "wrong.py", "def recipe(**options):\n    return 42\n")
    with pytest.raises(UsageError, match="returned int, expected a torchdoctor.Recipe"):
        load_recipe(str(path))


def test_error_at_import_shows_the_users_traceback(tmp_path, capsys):
    path = write(
        tmp_path / "broken.py",
        """
        def load_labels():
            raise ValueError("labels.csv has 3 columns, expected 2")

        LABELS = load_labels()
        """,
    )
    with pytest.raises(TorchdoctorError) as info:
        load_recipe(str(path))
    assert not isinstance(info.value, UsageError)
    assert "ValueError: labels.csv has 3 columns, expected 2" in str(info.value)
    shown = capsys.readouterr().err
    assert f'File "{path}", line 5, in <module>' in shown
    assert f'File "{path}", line 3, in load_labels' in shown
    assert "torchdoctor" not in shown.replace(str(tmp_path), "")  # our frames are filtered out
    assert "importlib" not in shown


def test_error_inside_recipe_function(tmp_path, capsys):
    path = write(
        tmp_path / "fails.py",
        """
        def recipe(**options):
            return build(options)

        def build(options):
            raise RuntimeError(f"no GPU for {options}")
        """,
    )
    with pytest.raises(TorchdoctorError, match=r"RuntimeError: no GPU for \{'size': 3\}"):
        load_recipe(str(path), size=3)
    shown = capsys.readouterr().err
    assert f'File "{path}", line 6, in build' in shown
    assert "loading.py" not in shown


def test_cli_style_failure_is_one_line_plus_user_traceback(tmp_path):
    """Through a real interpreter: stderr holds the user's traceback, nothing of ours."""
    path = write(tmp_path / "boom.py", "raise KeyError('missing column')\n")
    code = (
        "import sys\n"
        "from torchdoctor.errors import TorchdoctorError\n"
        "from torchdoctor.recipes.loading import load_recipe\n"
        f"try:\n    load_recipe({str(path)!r})\n"
        "except TorchdoctorError as exc:\n    print('error:', exc); sys.exit(exc.exit_code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "error: KeyError: 'missing column'" in result.stdout
    assert f'File "{path}", line 1, in <module>' in result.stderr
    assert "loading.py" not in result.stderr
