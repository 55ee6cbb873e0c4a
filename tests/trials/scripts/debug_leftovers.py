"""A training loop with a debugging session's leftovers: anomaly detection and a profiler left on,
gradients zero-filled, the per-tensor optimizer loop, and a validation pass in train mode (BatchNorm updates its running statistics there)."""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    torch.autograd.set_detect_anomaly(True)
    x = torch.randn(1024, 32)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    with torch.profiler.profile(record_shapes=True) as profiler:
        for step, i in enumerate(range(0, len(x), 32)):
            loss = nn.functional.cross_entropy(model(x[i : i + 32]), y[i : i + 32])
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            optimizer.step()
            profiler.step()
            if step % 4 == 3:
                with torch.no_grad():  # validation, still in train mode
                    accuracy = (model(x[:64]).argmax(1) == y[:64]).float().mean()
    print(profiler.key_averages().table(row_limit=5), float(accuracy))


if __name__ == "__main__":
    main()
