# An ImageFolder tree of photo-like JPEGs for the image job: DIR/class_N/*.jpg, 500x375 at quality 90,
# smooth gradients and shapes under grain, about 140 KB each (ImageNet's mean is about 110 KB).
# Usage: python make_images.py DIR COUNT
import os
import random
import sys

from PIL import Image, ImageDraw, ImageFilter


def photo(rng, width=500, height=375):
    base = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    tint = Image.new("RGB", (width, height), tuple(rng.randrange(256) for _ in range(3)))
    image = Image.blend(base, tint, 0.6)
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = rng.randrange(width), rng.randrange(height)
        r = rng.randrange(10, 120)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rng.randrange(256) for _ in range(3)))
    image = image.filter(ImageFilter.GaussianBlur(2))
    grain = Image.effect_noise((width, height), 48).convert("RGB")
    return Image.blend(image, grain, 0.22)


def main(root, count):
    rng = random.Random(11)
    for i in range(count):
        folder = os.path.join(root, "class_%d" % (i % 4))
        os.makedirs(folder, exist_ok=True)
        photo(rng).save(os.path.join(folder, "%05d.jpg" % i), quality=90)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
