"""Hand-written SGD (no torch.optim) on batches built with torch.tensor from lists of arrays."""

import numpy as np
import torch


def main():
    rng = np.random.default_rng(0)
    samples = [rng.standard_normal(128).astype(np.float32) for _ in range(4096)]
    targets = [np.float32(s[:4].sum()) for s in samples]

    torch.manual_seed(0)
    w1 = (0.1 * torch.randn(128, 32)).requires_grad_()
    b1 = torch.zeros(32, requires_grad=True)
    w2 = (0.1 * torch.randn(32, 1)).requires_grad_()
    lr = 0.01
    for step in range(40):
        idx = rng.integers(0, len(samples), size=256)
        x = torch.tensor([samples[i] for i in idx])  # a list of ndarrays, copied one by one
        y = torch.tensor([targets[i] for i in idx]).unsqueeze(1)
        pred = torch.relu(x @ w1 + b1) @ w2
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in (w1, b1, w2):
                p -= lr * p.grad
                p.grad = None


if __name__ == "__main__":
    main()
