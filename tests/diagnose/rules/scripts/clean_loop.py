"""A well-written CPU training loop: batched fetch of in-memory tensors, no per-step syncs,
inference_mode evaluation, fp32, fused optimizer."""

import torch
from torch import nn
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    SequentialSampler,
    TensorDataset,
)


def main():
    torch.manual_seed(0)
    x = torch.randn(4096, 256)
    y = (x[:, :10].sum(dim=1) > 0).long()
    train = TensorDataset(x[:3584], y[:3584])
    val = TensorDataset(x[3584:], y[3584:])
    # in-memory tensors: one indexing op per batch in this process (workers would only add
    # the cost of handing each batch over between processes)
    train_loader = DataLoader(train, batch_size=None,
                              sampler=BatchSampler(RandomSampler(train), 128, drop_last=False))
    val_loader = DataLoader(val, batch_size=None,
                            sampler=BatchSampler(SequentialSampler(val), 256, drop_last=False))

    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Dropout(0.1), nn.Linear(512, 512),
                          nn.ReLU(), nn.Linear(512, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)  # one pass per tensor
    criterion = nn.CrossEntropyLoss()

    for epoch in range(3):
        model.train()
        running = torch.zeros(())
        for xb, yb in train_loader:
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.detach()
        model.eval()
        correct = torch.zeros((), dtype=torch.long)
        with torch.inference_mode():
            for xb, yb in val_loader:
                correct += (model(xb).argmax(dim=1) == yb).sum()
        print(f"epoch {epoch}: loss {running.item() / len(train_loader):.3f} "
              f"val acc {correct.item() / len(val):.3f}")


if __name__ == "__main__":
    main()
