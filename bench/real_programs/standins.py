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


def planetoid(workdir: Path, folder: str, name: str = "cora", features: int = 1433) -> None:
    """PyG's Planetoid raw files `ind.NAME.{x,tx,allx,y,ty,ally,graph,test.index}` (pickled
    scipy matrices and NumPy one-hot labels, an adjacency dict, the test node ids) with Cora's
    sizes: 140 labelled, 1708 in `allx`, 1000 test nodes, 7 classes."""
    import pickle

    import numpy as np
    from scipy import sparse

    rng = np.random.default_rng(7)
    nodes, known, classes = 2708, 1708, 7
    labels = rng.integers(0, classes, nodes)
    onehot = np.eye(classes, dtype=np.int32)[labels]
    words = sparse.csr_matrix((rng.random((nodes, features)) < 0.013).astype(np.float32))
    neighbours: dict[int, list[int]] = {i: [] for i in range(nodes)}
    for a, b in rng.integers(0, nodes, (5429, 2)):
        if a != b:
            neighbours[int(a)].append(int(b))
            neighbours[int(b)].append(int(a))
    test = np.arange(known, nodes)
    parts = {
        "x": words[:140], "y": onehot[:140], "allx": words[:known], "ally": onehot[:known],
        "tx": words[known:], "ty": onehot[known:], "graph": neighbours,
    }  # fmt: skip
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    for part, value in parts.items():
        (root / f"ind.{name}.{part}").write_bytes(pickle.dumps(value))
    (root / f"ind.{name}.test.index").write_text("".join(f"{i}\n" for i in rng.permutation(test)))


def tu_dataset(workdir: Path, folder: str, name: str = "MUTAG", graphs: int = 188) -> None:
    """A TU graph-classification set (`NAME_A.txt`, `_graph_indicator`, `_graph_labels`,
    `_node_labels`, `_edge_labels`) shaped like MUTAG: small molecules of 10-28 atoms of 7
    kinds, ring-and-branch bonds of 4 kinds, two classes."""
    rng = random.Random(11)
    edges, indicator, node_labels, edge_labels, graph_labels = [], [], [], [], []
    first = 1
    for graph in range(1, graphs + 1):
        size = rng.randint(10, 28)
        atoms = range(first, first + size)
        indicator += [graph] * size
        node_labels += [rng.choice([0, 0, 0, 1, 2, 3, 4, 5, 6]) for _ in atoms]
        bonds = {(a, a + 1) for a in atoms if a + 1 < first + size}
        bonds |= {(first, first + size - 1), (first + 2, first + size // 2)}
        for a, b in sorted(bonds):
            kind = rng.randrange(4)
            edges += [(a, b), (b, a)]
            edge_labels += [kind, kind]
        graph_labels.append(rng.choice([-1, 1]))
        first += size
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "A": [f"{a}, {b}" for a, b in edges], "graph_indicator": indicator,
        "node_labels": node_labels, "edge_labels": edge_labels, "graph_labels": graph_labels,
    }  # fmt: skip
    for part, rows in files.items():
        (root / f"{name}_{part}.txt").write_text("".join(f"{row}\n" for row in rows))


def file(workdir: Path, path: str, lines: list[str]) -> None:
    """A small text file the program reads (a smaller config than its default, say)."""
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"{line}\n" for line in lines))


def image_folder(
    workdir: Path, folder: str, classes: int = 10, per_class: int = 64, size: int = 28
) -> None:
    """`folder/<class index>/<n>.png` greyscale images, one class-dependent pattern plus noise
    each (an MNIST-like tree of image files)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(5)
    for label in range(classes):
        root = workdir / folder / str(label)
        root.mkdir(parents=True, exist_ok=True)
        base = rng.integers(0, 192, (size, size), dtype=np.uint8)
        for n in range(per_class):
            pixels = base + rng.integers(0, 64, (size, size), dtype=np.uint8)
            Image.fromarray(pixels, mode="L").save(root / f"{n}.png")


def captcha_images(
    workdir: Path,
    folder: str,
    count: int = 1040,
    size: tuple[int, int] = (200, 50),
    length: int = 5,
    alphabet: str = "2345678bcdefgmnpwxy",
) -> None:
    """`folder/<text>.png` captcha-like RGB images, the label being the file name (the layout of
    the captcha_images_v2 set that CRNN+CTC captcha readers train on): `length` characters of
    `alphabet` drawn with PIL's default font at jittered places, noise lines and dots over a light
    background; file names are unique."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(13)
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    width, height = size
    seen: set[str] = set()
    while len(seen) < count:
        text = "".join(rng.choice(list(alphabet), length))
        if text in seen:
            continue
        seen.add(text)
        image = Image.new("RGB", size, tuple(int(v) for v in rng.integers(200, 256, 3)))
        draw = ImageDraw.Draw(image)
        for i, char in enumerate(text):
            x = 20 + i * (width - 40) // length + int(rng.integers(-3, 4))
            y = height // 3 + int(rng.integers(-6, 7))
            draw.text((x, y), char, fill=tuple(int(v) for v in rng.integers(0, 100, 3)))
        for _ in range(3):
            points = [(int(rng.integers(0, width)), int(rng.integers(0, height))) for _ in range(2)]
            draw.line(points, fill=(90, 90, 90), width=1)
        pixels = np.asarray(image).copy()
        dots = rng.random(pixels.shape[:2]) < 0.02
        pixels[dots] = 0
        Image.fromarray(pixels, mode="RGB").save(root / f"{text}.png")


def segmentation_pairs(
    workdir: Path, images: str, masks: str, count: int = 60, size: tuple[int, int] = (160, 128)
) -> None:
    """`images/<n>.jpg` RGB photos and `masks/<n>_mask.gif` two-value masks of the same size (the
    Carvana layout: an object on a background, the mask marking it)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(7)
    width, height = size
    (workdir / images).mkdir(parents=True, exist_ok=True)
    (workdir / masks).mkdir(parents=True, exist_ok=True)
    rows, cols = np.mgrid[0:height, 0:width]
    for n in range(count):
        cy, cx = (
            rng.integers(height // 4, 3 * height // 4),
            rng.integers(width // 4, 3 * width // 4),
        )
        inside = (rows - cy) ** 2 / (height / 5) ** 2 + (cols - cx) ** 2 / (width / 4) ** 2 < 1
        pixels = rng.integers(0, 96, (height, width, 3), dtype=np.uint8)
        pixels[inside] += np.array([120, 100, 60], dtype=np.uint8)
        Image.fromarray(pixels, mode="RGB").save(workdir / images / f"{n:04d}.jpg")
        Image.fromarray(inside.astype(np.uint8) * 255, mode="L").save(
            workdir / masks / f"{n:04d}_mask.gif"
        )


def sine_waves(
    workdir: Path, path: str, sequences: int = 100, length: int = 1000, period: int = 20
) -> None:
    """`sequences` phase-shifted sine waves of `length` float64 samples, saved with torch.save
    as one (sequences, length) array (time_sequence_prediction's generator makes 100 x 1000)."""
    import numpy as np
    import torch

    rng = np.random.default_rng(2)
    shifts = rng.integers(-4 * period, 4 * period, sequences).reshape(sequences, 1)
    data = np.sin((np.arange(length) + shifts) / period).astype("float64")
    torch.save(data, workdir / path)


def movielens_ratings(
    workdir: Path, path: str, users: int = 300, items: int = 2000, ratings: int = 20000
) -> None:
    """A MovieLens `ratings.csv` (userId,movieId,rating,timestamp; ids from 1): each user rates
    a random set of movies, popular movies more often."""
    import numpy as np

    rng = np.random.default_rng(11)
    popularity = 1.0 / np.arange(1, items + 1)
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < ratings:
        user = int(rng.integers(1, users + 1))
        item = int(rng.choice(items, p=popularity / popularity.sum())) + 1
        pairs.add((user, item))
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        f"{u},{i},{rng.integers(1, 11) / 2},{964982703 + n}"
        for n, (u, i) in enumerate(sorted(pairs))
    ]
    target.write_text("userId,movieId,rating,timestamp\n" + "\n".join(rows) + "\n")


def csv_split(workdir: Path, source: str, train: str, test: str, test_share: float = 0.2) -> None:
    """Split the program's own sample CSV (header kept in both) into the train and test files
    its script reads, shuffled (a repository that ships `dataset_sample.csv` and a split script
    whose output is not committed)."""
    rows = (workdir / source).read_text().splitlines()
    header, body = rows[0], rows[1:]
    random.Random(4).shuffle(body)
    cut = int(len(body) * (1 - test_share))
    for path, part in ((train, body[:cut]), (test, body[cut:])):
        (workdir / path).write_text("\n".join([header, *part]) + "\n")


def photos(
    workdir: Path, folder: str, count: int = 40, width: int = 481, height: int = 321
) -> None:
    """`folder/<n>.jpg` colour images (BSDS300's 481x321): smooth gradients plus noise, so a
    super-resolution model has structure to learn."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(7)
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    ys, xs = np.mgrid[0:height, 0:width]
    for n in range(count):
        fx, fy = rng.uniform(0.01, 0.05, 2)
        base = np.stack([np.sin(fx * xs + c) * np.cos(fy * ys - c) for c in range(3)], -1)
        pixels = (127 + 100 * base + rng.normal(0, 10, base.shape)).clip(0, 255)
        Image.fromarray(pixels.astype(np.uint8), mode="RGB").save(root / f"{n}.jpg")


def _sentence(rng: random.Random, low: int = 4, high: int = 14) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + rng.choice([".", "!", "?"])


def hf_dataset(workdir: Path, path: str, config: str, rows: dict[str, int], kind: str) -> None:
    """A local Hugging Face dataset folder at `path` (the hub id the script names, e.g.
    `nyu-mll/glue`; `datasets.load_dataset` reads a folder of that name before the hub): a
    README whose YAML declares `config` with one JSON-lines file per split. `kind` is `pair`
    (GLUE MRPC's sentence1, sentence2, label, idx; label 1 when the two sentences share their
    first word), `text` (wikitext's one `text` column, with the empty lines wikitext has) or
    `preference` (TRL's implicit-prompt preference pairs: `chosen` and `rejected` texts)."""
    import json

    rng = random.Random(11)
    root = workdir / path
    (root / config).mkdir(parents=True, exist_ok=True)
    yaml = ["---", "configs:", f"- config_name: {config}", "  data_files:"]
    for split, count in rows.items():
        yaml += [f"  - split: {split}", f"    path: {config}/{split}.jsonl"]
        records = []
        for i in range(count):
            if kind == "pair":
                a, b = _sentence(rng), _sentence(rng)
                same = a.split()[0].lower() == b.split()[0].lower()
                records.append({"sentence1": a, "sentence2": b, "label": int(same), "idx": i})
            elif kind == "preference":
                prompt = _sentence(rng)
                chosen, rejected = _sentence(rng, 6, 20), _sentence(rng, 2, 5)
                records.append({"chosen": f"{prompt} {chosen}", "rejected": f"{prompt} {rejected}"})
            else:
                line = " " + _sentence(rng, 8, 40) + " " if rng.random() > 0.3 else ""
                records.append({"text": line})
        lines = "".join(json.dumps(record) + "\n" for record in records)
        (root / config / f"{split}.jsonl").write_text(lines)
    (root / "README.md").write_text("\n".join([*yaml, "---", ""]))


def hf_model(workdir: Path, path: str, arch: str, vocab: int = 2000, layers: int = 2,
             hidden: int = 64, max_len: int = 128) -> None:  # fmt: skip
    """A local stand-in for a hub checkpoint at `path` (the id the script names, e.g.
    `bert-base-cased`; `from_pretrained` reads a folder of that name before the hub): a tokenizer
    trained here on generated prose and a small model of that family built from its config, its
    weights the random initialisation (nothing pretrained). `arch` is `bert` (WordPiece, a
    sequence classifier) or `llama` (byte-level BPE, a causal LM)."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    corpus = _prose(200_000, 5).splitlines()
    if arch == "bert":
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        tok.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=vocab,
                                                                  special_tokens=specials))  # fmt: skip
        cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
        )  # fmt: skip
        names = {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                 "sep_token": "[SEP]", "mask_token": "[MASK]"}  # fmt: skip
        config = transformers.BertConfig(
            vocab_size=tok.get_vocab_size(), hidden_size=hidden, num_hidden_layers=layers,
            num_attention_heads=2, intermediate_size=4 * hidden, max_position_embeddings=max_len,
        )  # fmt: skip
        model = transformers.BertForSequenceClassification(config)
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=vocab,
                                                            special_tokens=["<|endoftext|>"]))  # fmt: skip
        names = {"eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>",
                 "unk_token": "<|endoftext|>"}  # fmt: skip
        config = transformers.LlamaConfig(
            vocab_size=tok.get_vocab_size(), hidden_size=hidden, num_hidden_layers=layers,
            num_attention_heads=2, num_key_value_heads=2, intermediate_size=4 * hidden,
            max_position_embeddings=max_len, tie_word_embeddings=True,
        )  # fmt: skip
        model = transformers.LlamaForCausalLM(config)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_len,
                                                **names)  # fmt: skip
    fast.save_pretrained(workdir / path)
    model.save_pretrained(workdir / path)


def ett_hourly(workdir: Path, path: str, hours: int = 17420) -> None:
    """An ETT `ETTh1.csv` (date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT; one row an hour from
    2016-07-01): six loads with daily and weekly cycles plus noise, and the oil temperature
    following them with a lag (Informer/DLinear cut 12/4/4 months of it by row count)."""
    import numpy as np

    rng = np.random.default_rng(13)
    t = np.arange(hours)
    daily, weekly = np.sin(2 * np.pi * t / 24), np.sin(2 * np.pi * t / (24 * 7))
    loads = [
        scale * (daily * rng.uniform(0.5, 1.5) + 0.5 * weekly) + rng.normal(0, 0.3, hours) + base
        for scale, base in zip(rng.uniform(1, 4, 6), rng.uniform(-2, 8, 6))
    ]
    oil = 20 + 5 * np.roll(daily, 3) + 3 * weekly + rng.normal(0, 0.5, hours)
    start = np.datetime64("2016-07-01T00:00")
    stamps = (start + t.astype("timedelta64[h]")).astype(str)
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    columns = np.stack([*loads, oil], 1)
    rows = [
        f"{stamp.replace('T', ' ')}:00," + ",".join(f"{v:.3f}" for v in values)
        for stamp, values in zip(stamps, columns)
    ]
    target.write_text("date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT\n" + "\n".join(rows) + "\n")


def skill_builder(
    workdir: Path, path: str, users: int = 600, skills: int = 40, answers: int = 30000
) -> None:
    """An ASSISTments 2009 `skill_builder_data.csv` (order_id,user_id,skill_name,correct; the
    columns a knowledge-tracing loader reads): each user answers a run of questions on a few
    skills, and gets a skill right more often the more they practised it."""
    import numpy as np

    rng = np.random.default_rng(17)
    rows, order = [], 0
    per_user = rng.multinomial(answers, np.ones(users) / users)
    for user, count in enumerate(per_user):
        practised: dict[int, int] = {}
        chosen = rng.choice(skills, size=min(skills, 4), replace=False)
        for _ in range(count):
            skill = int(rng.choice(chosen))
            practised[skill] = practised.get(skill, 0) + 1
            correct = int(rng.random() < 1 - 0.6 / practised[skill] ** 0.5)
            order += 1
            rows.append(f"{order},{70000 + user},skill {skill},{correct}")
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("order_id,user_id,skill_name,correct\n" + "\n".join(rows) + "\n")


def tiny_nerf(workdir: Path, path: str, views: int = 106, size: int = 100) -> None:
    """The tiny NeRF `tiny_nerf_data.npz` (images (N, H, W, 3) float32 in [0, 1], poses
    (N, 4, 4) camera-to-world on a sphere looking at the origin, focal): renders of a coloured
    ball, so the scene has something to fit."""
    import numpy as np

    rng = np.random.default_rng(19)
    poses, images = [], []
    ys, xs = np.mgrid[0:size, 0:size]
    for _ in range(views):
        theta, phi = rng.uniform(0, 2 * np.pi), rng.uniform(-0.5, 0.5)
        eye = 4.0 * np.array(
            [np.cos(theta) * np.cos(phi), np.sin(theta) * np.cos(phi), np.sin(phi)]
        )
        forward = -eye / np.linalg.norm(eye)
        right = np.cross(forward, [0.0, 0.0, 1.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        pose = np.eye(4)
        pose[:3, :3] = np.stack([right, up, -forward], 1)
        pose[:3, 3] = eye
        poses.append(pose)
        radius = ((xs - size / 2) ** 2 + (ys - size / 2) ** 2) ** 0.5 / (size / 3)
        shade = np.clip(1 - radius, 0, 1)
        colour = 0.5 + 0.5 * np.array([np.cos(theta), np.sin(theta), np.sin(phi)])
        images.append(shade[..., None] * colour)
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        target,
        images=np.array(images, dtype=np.float32),
        poses=np.array(poses, dtype=np.float32),
        focal=np.array(138.88, dtype=np.float64),
    )


def zinc(workdir: Path, folder: str, sizes: tuple = (2000, 200, 200)) -> None:
    """ZINC's raw files as PyG's `ZINC` reads them (`{split}.pickle`: a list of molecules, each a
    dict of `atom_type` (atoms,) long, `bond_type` (atoms, atoms) symmetric with bond types 1-3
    and 0 for none, `logP_SA_cycle_normalized` (1,) float; `{split}.index`: the subset's indices,
    comma separated): chains of 12-30 atoms of 28 types with a few ring bonds, the target a sum of
    per-atom-type contributions plus one per ring bond."""
    import pickle

    import torch

    generator = torch.Generator().manual_seed(23)
    contribution = torch.randn(28, generator=generator) * 0.3
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    for split, count in zip(("train", "val", "test"), sizes):
        molecules = []
        for _ in range(count):
            atoms = int(torch.randint(12, 31, (1,), generator=generator))
            atom_type = torch.randint(0, 28, (atoms,), generator=generator)
            bonds = torch.zeros(atoms, atoms, dtype=torch.long)
            for a in range(atoms - 1):
                bonds[a, a + 1] = bonds[a + 1, a] = int(
                    torch.randint(1, 4, (1,), generator=generator)
                )
            rings = int(torch.randint(0, 3, (1,), generator=generator))
            for _ring in range(rings):
                a, b = sorted(torch.randint(0, atoms, (2,), generator=generator).tolist())
                if b - a > 2:
                    bonds[a, b] = bonds[b, a] = 1
            target = contribution[atom_type].sum() / atoms**0.5 + 0.5 * rings
            molecules.append({"atom_type": atom_type, "bond_type": bonds,
                              "logP_SA_cycle_normalized": target.view(1)})  # fmt: skip
        with open(root / f"{split}.pickle", "wb") as f:
            pickle.dump(molecules, f)
        (root / f"{split}.index").write_text(",".join(str(i) for i in range(count)) + "\n")


def building_damage(workdir: Path, folder: str, train: int = 20000, test: int = 5000) -> None:
    """The Richter's Predictor tables (`train.csv` with `damage_grade` 1-3, `test.csv` without),
    with the columns tabtransformers' classification template names: building_id, four
    categorical columns of letter codes, age / area / height and superstructure flags; the grade
    follows age and the foundation type so that a model can learn something."""
    import numpy as np

    rng = np.random.default_rng(13)
    categorical = {
        "land_surface_condition": list("not"),
        "foundation_type": list("hiruw"),
        "roof_type": list("nqx"),
        "ground_floor_type": list("fmvxz"),
    }
    flags = ["adobe_mud", "stone_flag", "timber", "bamboo"]
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    header = ["building_id", *categorical, "age", "area_percentage", "height_percentage"]
    header += [f"has_superstructure_{flag}" for flag in flags]
    for name, rows, labelled in (("train.csv", train, True), ("test.csv", test, False)):
        lines = [",".join(header + (["damage_grade"] if labelled else []))]
        for n in range(rows):
            codes = [str(rng.choice(values)) for values in categorical.values()]
            age = int(rng.integers(0, 100))
            numbers = [age, int(rng.integers(1, 40)), int(rng.integers(2, 15))]
            row = [str(100000 * labelled + n), *codes, *map(str, numbers)]
            row += [str(int(rng.random() < 0.3)) for _ in flags]
            if labelled:
                grade = 1 + (age > 30) + (codes[1] in "ru" and rng.random() < 0.7)
                row.append(str(grade))
            lines.append(",".join(row))
        (root / name).write_text("\n".join(lines) + "\n")


def modelnet(
    workdir: Path, folder: str, categories: int = 10, train: int = 24, test: int = 6,
    points: int = 1200,
) -> None:  # fmt: skip
    """ModelNet's resampled point clouds as the PointNet loaders read them
    (`modelnet40_normal_resampled`): `modelnet<categories>_shape_names.txt`, `_train.txt` and
    `_test.txt` (shape ids `<name>_<n>`), and `<name>/<name>_<n>.txt` of `x,y,z,nx,ny,nz` lines:
    each category's points on its own ellipsoid (axes per category), with noise and the unit
    normals of that surface, so that a classifier has shapes to tell apart."""
    import numpy as np

    rng = np.random.default_rng(17)
    root = workdir / folder
    root.mkdir(parents=True, exist_ok=True)
    names = [f"shape{c:02d}" for c in range(categories)]
    (root / f"modelnet{categories}_shape_names.txt").write_text("\n".join(names) + "\n")
    splits: dict[str, list[str]] = {"train": [], "test": []}
    for name in names:
        (root / name).mkdir(exist_ok=True)
        axes = 0.4 + rng.random(3)
        for n in range(train + test):
            shape_id = f"{name}_{n + 1:04d}"
            splits["train" if n < train else "test"].append(shape_id)
            direction = rng.standard_normal((points, 3))
            direction /= np.linalg.norm(direction, axis=1, keepdims=True)
            xyz = direction * axes + rng.normal(0, 0.02, (points, 3))
            normals = direction / axes
            normals /= np.linalg.norm(normals, axis=1, keepdims=True)
            lines = [",".join(f"{v:.6f}" for v in row) for row in np.hstack([xyz, normals])]
            (root / name / f"{shape_id}.txt").write_text("\n".join(lines) + "\n")
    for split, ids in splits.items():
        (root / f"modelnet{categories}_{split}.txt").write_text("\n".join(ids) + "\n")


def celeba_attributes(
    workdir: Path, folder: str, count: int = 2100, size: int = 64,
    attributes: tuple = ("Black_Hair", "Blond_Hair", "Brown_Hair", "Male", "Young", "Smiling"),
) -> None:  # fmt: skip
    """CelebA's aligned faces as StarGAN's loader reads them: `folder/<n>.jpg` (`photos`, at
    `size` square) and `folder/list_attr_celeba.txt` (the count, the attribute names, then one
    `<file> 1|-1 ...` line per image, each attribute drawn at random)."""
    import numpy as np

    photos(workdir, folder, count=count, width=size, height=size)
    rng = np.random.default_rng(19)
    lines = [str(count), " ".join(attributes)]
    for n in range(count):
        values = rng.choice(["1", "-1"], size=len(attributes))
        lines.append(f"{n}.jpg " + " ".join(values))
    (workdir / folder / "list_attr_celeba.txt").write_text("\n".join(lines) + "\n")


def car_racing_rollouts(
    workdir: Path, folder: str, rollouts: int = 640, length: int = 40, size: int = 64
) -> None:
    """World Models' recorded CarRacing rollouts: `folder/thread_<k>/rollout_<n>.npz`, each with
    `observations` (length, size, size, 3) uint8, `actions` (length, 3), `rewards` (length,) and
    `terminals` (length,). The frames are a flat road colour with a grass band that drifts, so
    the compressed files stay small (the program keeps the last 600 for its test set)."""
    import numpy as np

    rng = np.random.default_rng(23)
    for n in range(rollouts):
        thread = workdir / folder / f"thread_{n % 8}"
        thread.mkdir(parents=True, exist_ok=True)
        frames = np.full((length, size, size, 3), (107, 107, 107), dtype=np.uint8)
        offset = int(rng.integers(0, size // 2))
        for t in range(length):
            left = (offset + t) % (size // 2)
            frames[t, :, :left] = (102, 204, 102)  # the grass beside the road
        np.savez_compressed(
            thread / f"rollout_{n}.npz",
            observations=frames,
            actions=rng.uniform(-1, 1, (length, 3)).astype(np.float32),
            rewards=rng.normal(0, 1, length).astype(np.float32),
            terminals=np.arange(length) == length - 1,
        )


def d4rl_trajectories(
    workdir: Path, path: str, trajectories: int = 40, length: int = 200, state_dim: int = 17,
    act_dim: int = 6,
) -> None:  # fmt: skip
    """A D4RL data set as the Decision Transformer scripts pickle it: a list of trajectories,
    each a dict of `observations` (length, state_dim), `next_observations`, `actions` (length,
    act_dim) in [-1, 1], `rewards` (length,) and `terminals` (length,), float32; the states
    follow a random linear system driven by the actions (HalfCheetah's dimensions)."""
    import pickle

    import numpy as np

    rng = np.random.default_rng(29)
    dynamics = rng.normal(0, 0.3, (state_dim, state_dim)) / np.sqrt(state_dim)
    control = rng.normal(0, 0.3, (act_dim, state_dim))
    data = []
    for _ in range(trajectories):
        states = np.zeros((length + 1, state_dim), dtype=np.float32)
        states[0] = rng.normal(0, 0.1, state_dim)
        actions = rng.uniform(-1, 1, (length, act_dim)).astype(np.float32)
        for t in range(length):
            states[t + 1] = np.tanh(states[t] @ dynamics + actions[t] @ control)
        data.append({
            "observations": states[:-1], "next_observations": states[1:], "actions": actions,
            "rewards": (states[1:, 0] - 0.1 * (actions**2).sum(1)).astype(np.float32),
            "terminals": np.zeros(length, dtype=bool),
        })  # fmt: skip
    target = workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(pickle.dumps(data))
