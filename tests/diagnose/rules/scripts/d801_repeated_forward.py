"""Computes the training accuracy with a second forward pass of the same batch in every step."""

import torch
from torch import nn


def accuracy(net, inputs, labels):
    with torch.no_grad():
        return (net(inputs).argmax(dim=1) == labels).float().mean()


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                        nn.Linear(512, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    history = []
    for step in range(300):
        inputs, labels = torch.randn(256, 128), torch.randint(0, 10, (256,))
        loss = nn.functional.cross_entropy(net(inputs), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(accuracy(net, inputs, labels))


if __name__ == "__main__":
    main()
