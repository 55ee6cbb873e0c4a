"""D304 at a rarer frequency: validation every 6 steps over a validation set ten times the
training batch count, so it takes more time than the training between two of them (h23's
validation on a clock with mixed units had this shape); no DataLoader, tensor slices."""

import torch
from torch import nn

if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(40000, 64)
    y = (x[:, :4].sum(1) > 0).long()
    xv, yv = x[32000:], y[32000:]
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(400):
        idx = torch.randint(0, 32000, (128,))
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 6 == 5:
            model.eval()
            with torch.inference_mode():
                acc = sum(float((model(xv[i:i + 128]).argmax(-1) == yv[i:i + 128]).sum())
                          for i in range(0, len(xv), 128)) / len(xv)
            model.train()
            print(step, acc)
