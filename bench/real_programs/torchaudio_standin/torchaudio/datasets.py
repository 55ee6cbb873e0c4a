"""SPEECHCOMMANDS as torchaudio lays it out: `_path`, `_walker` of file paths, the
validation/testing list files, items `(waveform, sample_rate, label, speaker_id, utterance)`.
The files named are never read: each waveform is generated from its path."""

from __future__ import annotations

import os
import zlib

import numpy as np
import torch

LABELS = ["yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "zero", "one"]
CLIPS_PER_LABEL = 250
SAMPLE_RATE = 16000


class SPEECHCOMMANDS(torch.utils.data.Dataset):
    def __init__(self, root, url="speech_commands_v0.02", folder_in_archive="SpeechCommands",
                 download=False, subset=None):  # fmt: skip
        self._path = os.path.join(os.fspath(root), folder_in_archive, url)
        names = [
            f"{label}/{i:04x}{j:04x}_nohash_{i % 3}.wav"
            for j, label in enumerate(LABELS)
            for i in range(CLIPS_PER_LABEL)
        ]
        self._write_lists(names)
        self._walker = [os.path.join(self._path, name) for name in names]
        if subset in ("validation", "testing"):
            listed = self._listed(f"{subset}_list.txt")
            self._walker = [w for w in self._walker if w in listed]
        elif subset == "training":
            held_out = self._listed("validation_list.txt") | self._listed("testing_list.txt")
            self._walker = [w for w in self._walker if w not in held_out]

    def _write_lists(self, names: list[str]) -> None:
        os.makedirs(self._path, exist_ok=True)
        for index, listing in ((8, "validation_list.txt"), (9, "testing_list.txt")):
            path = os.path.join(self._path, listing)
            if not os.path.exists(path):
                chosen = [n for i, n in enumerate(names) if i % 10 == index]
                with open(path, "w") as f:
                    f.write("".join(f"{n}\n" for n in chosen))

    def _listed(self, listing: str) -> set[str]:
        with open(os.path.join(self._path, listing)) as f:
            return {os.path.join(self._path, line.strip()) for line in f}

    def __len__(self) -> int:
        return len(self._walker)

    def __getitem__(self, n: int):
        path = self._walker[n]
        relative = os.path.relpath(path, self._path)
        label, name = relative.split(os.sep)[-2:]
        speaker, _, utterance = name[: -len(".wav")].split("_")
        rng = np.random.default_rng(zlib.crc32(relative.encode()))
        length = SAMPLE_RATE - int(rng.integers(0, SAMPLE_RATE // 8))  # clips of varying length
        t = np.arange(length) / SAMPLE_RATE
        tone = 0.3 * np.sin(2 * np.pi * (200 + 60 * LABELS.index(label)) * t)
        wave = (tone + 0.05 * rng.standard_normal(length)).astype(np.float32)
        return torch.from_numpy(wave)[None], SAMPLE_RATE, label, speaker, int(utterance)
