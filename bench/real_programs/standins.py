"""Data stand-ins for the real-programs corpus: files of the shape each public script expects,
generated here (the machines that run the corpus have no network; nothing is downloaded).

Each stand-in is `NAME(workdir: Path, **options)`; corpus.json names them per program.
"""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "the of and to in is was for on that with as by at from his her they this which or be an "
    "had not are but were their one all has have been would there what when so if out up into "
    "time king lord love night day sweet good come speak well heart death blood crown sword "
    "fair gentle noble honour grace truth war peace hand eyes word world thou thy thee shall"
).split()


def _prose(n_chars: int, seed: int) -> str:
    """English-looking text: lines of words with punctuation and capitals (a char-level LM's
    vocabulary of ~60 symbols, like tiny-shakespeare)."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_chars:
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 12))]
        words[0] = words[0].capitalize()
        line = " ".join(words) + rng.choice([".", ",", ";", "!", "?", ":"]) + "\n"
        if rng.random() < 0.15:
            line = rng.choice(["KING", "LORD", "FIRST CITIZEN", "QUEEN"]) + ":\n" + line
        out.append(line)
        size += len(line)
    return "".join(out)[:n_chars]


def text(workdir: Path, path: str, chars: int = 300_000, seed: int = 0) -> None:
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_prose(chars, seed))


def wikitext(workdir: Path, folder: str = "data/wikitext-2", chars: int = 400_000) -> None:
    """train/valid/test.txt in wikitext's token layout (space-separated words, `<unk>` tokens)."""
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    for split, share, seed in (("train", 1.0, 1), ("valid", 0.1, 2), ("test", 0.1, 3)):
        body = _prose(int(chars * share), seed).replace(",", " ,").replace(".", " .")
        lines = [" " + line.lower().replace("king", "<unk>") + " " for line in body.splitlines()]
        (root / f"{split}.txt").write_text("\n".join(lines) + "\n")


def cora(workdir: Path, folder: str, nodes: int = 2708, features: int = 1433) -> None:
    """cora.content (`id <binary features> label`) and cora.cites (`cited citing`), with the
    Cora dataset's sizes: 2708 papers, 1433 words, 7 classes, ~5400 citations."""
    rng = random.Random(7)
    classes = [
        "Case_Based",
        "Genetic_Algorithms",
        "Neural_Networks",
        "Probabilistic_Methods",
        "Reinforcement_Learning",
        "Rule_Learning",
        "Theory",
    ]
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    ids = rng.sample(range(1, 10**6), nodes)
    labels = [rng.choice(classes) for _ in ids]
    rows = []
    for paper, label in zip(ids, labels):
        words = ["1" if rng.random() < 0.013 else "0" for _ in range(features)]
        rows.append("\t".join([str(paper), *words, label]))
    (root / "cora.content").write_text("\n".join(rows) + "\n")
    edges = set()
    while len(edges) < 5429:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a != b and (labels[a] == labels[b] or rng.random() < 0.2):
            edges.add((ids[a], ids[b]))
    (root / "cora.cites").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(edges)))
