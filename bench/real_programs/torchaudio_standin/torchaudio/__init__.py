"""A data stand-in for the parts of torchaudio that public training scripts use.

torchaudio wheels pin one torch version (not ours) and nothing may be downloaded, so this
package (put on PYTHONPATH by run.py for the rows that need it, never by torchdoctor) serves
SPEECHCOMMANDS as generated one-second waveforms (a label-dependent tone plus noise) in
torchaudio's layout, and the Resample transform. It is not torchaudio: only enough for the
scripts to run unmodified.
"""

from . import datasets, transforms

__version__ = "0.0-standin"
__all__ = ["datasets", "transforms"]
