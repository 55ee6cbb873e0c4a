"""MoCo-style contrastive learning: a query encoder trained by SGD, a momentum key encoder
updated with `torch._foreach_mul_/_add_`, and a queue of negatives. The optimizer is built from
a param-group helper that splits decay / no-decay parameters and passes options from the config,
where `foreach: False` was left from a debugging session; the encoder has many small tensors.

Planted: the optimizer updates ~70 tensors one at a time (foreach=False). --fixed: the config
asks for foreach=True (on CPU torch's default is the per-tensor loop too).
"""

import sys

import torch
from torch import nn

OPTIM = {"lr": 0.03, "momentum": 0.9, "weight_decay": 1e-4, "foreach": False}
if "--fixed" in sys.argv:
    OPTIM["foreach"] = True


def encoder():
    layers, d = [], 32
    for _ in range(17):
        layers += [nn.Linear(d, 48), nn.LayerNorm(48), nn.ReLU()]
        d = 48
    return nn.Sequential(*layers, nn.Linear(48, 32))


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim == 1 else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def main():
    torch.manual_seed(0)
    q_enc, k_enc = encoder(), encoder()
    k_enc.load_state_dict(q_enc.state_dict())
    for p in k_enc.parameters():
        p.requires_grad_(False)
    opts = {k: v for k, v in OPTIM.items() if k != "weight_decay"}
    opt = torch.optim.SGD(param_groups(q_enc, OPTIM["weight_decay"]), **opts)
    queue = nn.functional.normalize(torch.randn(1024, 32), dim=1)
    data = torch.randn(8192, 32)
    for epoch in range(2):
        for idx in torch.randperm(len(data)).split(64):
            x = data[idx]
            q = nn.functional.normalize(q_enc(x + 0.1 * torch.randn_like(x)), dim=1)
            with torch.no_grad():
                qp, kp = list(q_enc.parameters()), list(k_enc.parameters())
                torch._foreach_mul_(kp, 0.99)
                torch._foreach_add_(kp, qp, alpha=0.01)
                k = nn.functional.normalize(k_enc(x + 0.1 * torch.randn_like(x)), dim=1)
            logits = torch.cat([(q * k).sum(1, keepdim=True), q @ queue.T], 1) / 0.07
            loss = nn.functional.cross_entropy(logits, torch.zeros(len(x), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
            queue = torch.cat([k, queue])[:1024]
        print(epoch, loss.item())


if __name__ == "__main__":
    main()
