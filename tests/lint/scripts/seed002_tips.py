# The combined example of seed 002 (tips and tricks), made syntactically valid.
import torch
from torch.cuda.amp import GradScaler

checkpoint = torch.load(save_path, map_location=device)
model.load_state_dict(checkpoint["model"])

model.train()
optimizer.zero_grad(set_to_none=True)
scaler = GradScaler()
for i, (features, target) in enumerate(data):
    features = features.to("cuda:0", non_blocking=True)
    target = target.to("cuda:0", non_blocking=True)
    with torch.cuda.amp.autocast():
        output = model(features)
        loss = criterion(output, target)
    scaler.scale(loss).backward()
    if (i + 1) % 2 == 0 or (i + 1) == len(data):
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
