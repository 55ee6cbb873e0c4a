"""CLEAN: truncated BPTT done right for a GRU: the hidden state is detached at every chunk
boundary, the gradient norm is clipped (clip_grad_norm_ with foreach), the loss is accumulated
as a tensor and printed once per epoch. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn

VOCAB, CHUNK = 120, 24


def main():
    torch.manual_seed(0)
    emb, rnn, out = nn.Embedding(VOCAB, 48), nn.GRU(48, 128, batch_first=True), nn.Linear(128,
                                                                                          VOCAB)
    params = [*emb.parameters(), *rnn.parameters(), *out.parameters()]
    opt = torch.optim.Adam(params, lr=2e-3)
    stream = torch.randint(0, VOCAB, (32, 4800))
    for epoch in range(2):
        hidden, total = None, torch.zeros(())
        for t in range(0, stream.shape[1] - CHUNK - 1, CHUNK):
            ids, target = stream[:, t:t + CHUNK], stream[:, t + 1:t + CHUNK + 1]
            if hidden is not None:
                hidden = hidden.detach()
            h, hidden = rnn(emb(ids), hidden)
            loss = nn.functional.cross_entropy(out(h).flatten(0, 1), target.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
            opt.step()
            total += loss.detach()
        print(epoch, total.item())


if __name__ == "__main__":
    main()
