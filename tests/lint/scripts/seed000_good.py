# Seed 000's notebook: the corrected techniques, which must stay quiet apart from the
# per-step `.item()` print it does once outside a loop.
import torch
from torch import nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
loader = DataLoader(dataset, batch_size=8, shuffle=True, num_workers=2, pin_memory=(device.type == "cuda"))
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
images, labels = next(iter(loader))
images = images.to(device, non_blocking=True)
labels = labels.to(device, non_blocking=True)
use_amp = device.type == "cuda"
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
optimizer.zero_grad(set_to_none=True)
with torch.amp.autocast("cuda", enabled=use_amp):
    logits = model(images)
    loss = criterion(logits, labels)
scaler.scale(loss).backward()
scaler.unscale_(optimizer)
gradient_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
scaler.step(optimizer)
scaler.update()
print("loss:", loss.item())
accumulation_steps = 2
optimizer.zero_grad(set_to_none=True)
for step, (images, labels) in enumerate(loader):
    images = images.to(device, non_blocking=True)
    labels = labels.to(device, non_blocking=True)
    with torch.amp.autocast("cuda", enabled=use_amp):
        logits = model(images)
        loss = criterion(logits, labels) / accumulation_steps
    scaler.scale(loss).backward()
    if (step + 1) % accumulation_steps == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    break


@torch.inference_mode()
def predict_one_batch(model, loader):
    model.eval()
    images, _ = next(iter(loader))
    images = images.to(device, non_blocking=True)
    return model(images).softmax(dim=1)
