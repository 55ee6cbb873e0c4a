"""A seq2seq model (GRU encoder, GRU decoder with teacher forcing over the whole target) whose
training step is a recipe: a list of action names from the configuration, run in order by a
dispatcher (`for action in cfg["recipe"]: ACTIONS[action](state)`).

Planted: the recipe is `["forward", "backward", "zero_grad", "step"]`: the gradients are cleared
between backward and step, so the optimizer steps with no gradients and nothing learns.
--fixed: `["zero_grad", "forward", "backward", "step"]`.
"""

import sys

import torch
from torch import nn

FIXED = "--fixed" in sys.argv
CFG = {
    "recipe": ["zero_grad", "forward", "backward", "step"]
    if FIXED
    else ["forward", "backward", "zero_grad", "step"],
    "epochs": 3,
}


class Seq2Seq(nn.Module):
    def __init__(self, vocab=32, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, 64)
        self.enc = nn.GRU(64, hidden, batch_first=True)
        self.dec = nn.GRU(64, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src, tgt_in):
        _, h = self.enc(self.emb(src))
        return self.out(self.dec(self.emb(tgt_in), h)[0])


def act_forward(s):
    logits = s["model"](s["src"], s["tgt"][:, :-1])
    s["loss"] = nn.functional.cross_entropy(logits.reshape(-1, 32), s["tgt"][:, 1:].reshape(-1))


ACTIONS = {
    "forward": act_forward,
    "backward": lambda s: s["loss"].backward(),
    "zero_grad": lambda s: s["opt"].zero_grad(),
    "step": lambda s: s["opt"].step(),
}


if __name__ == "__main__":
    torch.manual_seed(0)
    src = torch.randint(1, 32, (2048, 12))
    tgt = torch.cat([torch.zeros(2048, 1, dtype=torch.long), src.flip(1)], 1)
    model = Seq2Seq()
    state = {"model": model, "opt": torch.optim.Adam(model.parameters(), lr=1e-3)}
    for epoch in range(CFG["epochs"]):
        for idx in torch.randperm(len(src)).split(64):
            state["src"], state["tgt"] = src[idx], tgt[idx]
            for action in CFG["recipe"]:
                ACTIONS[action](state)
        print("epoch", epoch, float(state["loss"]))
