# Writes an ImageFolder-style tree of small JPEGs for learn's CNN test: DIR/class_a/*.jpg, DIR/class_b/*.jpg.
import os
import random
import sys

from PIL import Image


def main(root, per_class, side):
    rng = random.Random(7)
    for name in ("class_a", "class_b"):
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(per_class):
            pixels = bytes(rng.randrange(256) for _ in range(side * side * 3))
            Image.frombytes("RGB", (side, side), pixels).save(os.path.join(root, name, "%03d.jpg" % i), quality=90)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 48, int(sys.argv[3]) if len(sys.argv) > 3 else 32)
