"""Mixed-precision loop that clips gradients straight after the scaled backward (no unscale_)."""

import torch
from torch import nn


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler(device)
    criterion = nn.CrossEntropyLoss()
    for step in range(40):
        x = torch.randn(128, 256, device=device)
        y = torch.randint(0, 10, (128,), device=device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    main()
