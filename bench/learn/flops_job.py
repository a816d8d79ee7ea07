# One model trained a few steps for `nodeaudit learn` to count its FLOPs: torchvision ResNet-18 or
# ResNet-50 at 224x224 (batch 1), or the GPT-2-small-shaped decoder of tests/harness/learn/train_gpt.py.
import sys

import torch
import torchvision


def main(name, steps):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(num_classes=1000)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(1, 3, 224, 224), torch.randint(0, 1000, (1,))
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
