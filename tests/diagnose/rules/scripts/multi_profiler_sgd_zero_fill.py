"""Three problems, each with a run-time fix: a torch.profiler left around the training loop,
SGD with momentum in its default per-tensor step, and gradients zero-filled every step instead of
set to None."""

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(1536, 256), torch.randint(0, 10, (1536,))
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(0, len(x), 16):
            loss = nn.functional.cross_entropy(model(x[i:i + 16]), y[i:i + 16])
            optimizer.zero_grad(set_to_none=False)
            loss.backward()
            optimizer.step()
    print(f"{len(prof.key_averages())} ops profiled, last loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
