"""Clean: federated averaging simulated in one process: eight clients with non-IID generated
tabular data held as tensors, one local epoch per round over shuffled index slices, the server
averaging the clients' state dicts; one local model reused for every client
(`load_state_dict`), evaluation of the global model per round under `torch.no_grad()`.

No planted problem; `--fixed` changes nothing (kept for the bench's control run).
"""

import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))


if __name__ == "__main__":
    torch.manual_seed(0)
    clients = []
    for c in range(8):
        x = torch.randn(1024, 32) + 0.2 * c
        clients.append((x, (x[:, :3].sum(1) > 0.6 * c).long()))
    xv = torch.cat([x[:64] for x, _ in clients])
    yv = torch.cat([y[:64] for _, y in clients])
    global_model, local = make_model(), make_model()
    for rnd in range(5):
        states = []
        for x, y in clients:
            local.load_state_dict(global_model.state_dict())
            opt = torch.optim.SGD(local.parameters(), lr=0.05)
            perm = torch.randperm(len(x))
            for start in range(0, len(x), 128):
                idx = perm[start : start + 128]
                loss = nn.functional.cross_entropy(local(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            states.append({k: v.clone() for k, v in local.state_dict().items()})
        global_model.load_state_dict({k: torch.stack([s[k] for s in states]).mean(0)
                                      for k in states[0]})
        with torch.no_grad():
            acc = (global_model(xv).argmax(1) == yv).float().mean().item()
        print("round", rnd, acc)
