"""`main()` with `sys.argv` parsed by `getopt` into defaults; a click-through-rate model
(`nn.EmbeddingBag` over hashed feature ids + an MLP) trained on synthetic impressions.

Planted: the default batch size is 2 ("-b" was meant to be given on the command line), so every
step runs the model on two impressions. --fixed: the default batch is 64.
"""

import getopt
import sys

import torch
from torch import nn

HASH, FIELDS = 50000, 12


class CTR(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(HASH, 32, mode="sum")
        self.mlp = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, 1))

    def forward(self, ids):
        return self.mlp(self.bag(ids)).squeeze(1)


def main(argv):
    opts, _ = getopt.getopt(argv, "b:e:", ["fixed"])
    args = {"-b": "2", "-e": "1"}
    args.update(opts)
    if ("--fixed", "") in opts:
        args["-b"] = "64"
    batch, epochs = int(args["-b"]), int(args["-e"])
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, HASH, (2400, FIELDS), generator=g)
    clicked = ((ids[:, 0] % 11) < 3).float()
    model = CTR()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    for epoch in range(epochs):
        for idx in torch.randperm(len(ids), generator=g).split(batch):
            loss = nn.functional.binary_cross_entropy_with_logits(model(ids[idx]), clicked[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    main(sys.argv[1:])
