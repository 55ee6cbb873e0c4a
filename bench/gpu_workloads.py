"""Two GPU training steps for the GPU benches: a conv net and a transformer LM, both under bf16
autocast the way a tuned program runs them (channels_last and cudnn.benchmark for the conv net,
fused AdamW, pinned inputs already on the device: the step is the GPU's work, not the loader's).

    python3 bench/gpu_workloads.py --model conv|transformer [--steps 200]

runs the workload's loop plainly (a script `torchdoctor diagnose` can run).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
from torch import nn

from torchdoctor.models.resnet import resnet18


class TransformerLM(nn.Module):
    """A GPT-style causal LM on PyTorch's encoder layers (pre-norm, GELU)."""

    def __init__(self, vocab: int = 8192, width: int = 1024, layers: int = 8, context: int = 512):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.zeros(context, width))
        layer = nn.TransformerEncoderLayer(
            width,
            width // 64,
            4 * width,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        x = self.blocks(x, mask=self.mask[: tokens.shape[1], : tokens.shape[1]], is_causal=True)
        return self.head(x)


def workload(name: str) -> tuple[Callable[[], torch.Tensor], str]:
    """(one training step, description) on CUDA; the step returns the loss (not read)."""
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    if name == "conv":
        batch = 256
        model = resnet18(num_classes=10, width=64).cuda().to(memory_format=torch.channels_last)
        x = torch.randn(batch, 3, 32, 32, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 10, (batch,), device="cuda")
        description = f"ResNet-18 (torchvision widths) on 32x32 images, batch {batch}"
    elif name == "transformer":
        batch, context, vocab = 16, 512, 8192
        model = TransformerLM(vocab=vocab, context=context).cuda()
        x = torch.randint(0, vocab, (batch, context), device="cuda")
        y = torch.randint(0, vocab, (batch * context,), device="cuda")
        description = (
            f"causal transformer LM, 8 layers x 1024 wide, context {context}, batch {batch}"
        )
    else:
        raise SystemExit(f"unknown workload {name!r}: conv or transformer")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step() -> torch.Tensor:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)
            loss = nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return step, description + ", bf16 autocast, fused AdamW"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="conv")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    step, _ = workload(args.model)
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
