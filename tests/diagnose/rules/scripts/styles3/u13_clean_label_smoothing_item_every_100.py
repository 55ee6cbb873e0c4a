"""CLEAN: label smoothing, a running loss kept as a detached tensor and read with .item() only
every 100 steps, gradients cleared with set_to_none, an evaluation under inference_mode in eval
mode at each epoch end. Nothing is planted (`--fixed` changes nothing).
"""

import torch
from torch import nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(60, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 256),
                          nn.ReLU(), nn.Linear(256, 12))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(19200, 60), torch.randint(0, 12, (19200,))
    vx, vy = torch.randn(2048, 60), torch.randint(0, 12, (2048,))
    running = torch.zeros(())
    for epoch in range(3):
        model.train()
        for step, (xb, yb) in enumerate(zip(x.split(96), y.split(96))):
            loss = criterion(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.detach()
            if step % 100 == 99:
                print(f"step {step}: {running.item() / 100:.4f}")
                running.zero_()
        model.eval()
        with torch.inference_mode():
            acc = (model(vx).argmax(1) == vy).float().mean().item()
        print(f"epoch {epoch}: acc {acc:.3f}")


if __name__ == "__main__":
    main()
