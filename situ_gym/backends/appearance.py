"""How a product looks, derived from its catalog record: colours, material patterns, package art.

Everything here is a pure function of the product (name, brand, category, size and
attribute labels) and the label seed, so a scene always looks the same and nothing is
stored in the assets. Colour words in ``color:`` labels and names map to RGB through
:data:`COLOR_WORDS` (multi-word colours such as "forest green" first); ``material:``
labels pick a surface pattern (wood grain, brushed metal, velvet sheen, glazed
ceramic, weave, marble veining ...); Supermarket packaging (``packaging:`` label, else
the category) picks a package shape (can, bottle, jar, box, bag, carton, tub,
produce ...) drawn with the brand, the product name and its size on it.

Textures are small square RGB tiles (:data:`TILE` texels a side) that the renderer
maps onto faces. :func:`package_texture` and :func:`pattern_texture` are cached per
process (``functools.cache`` and a module dict), so each tile is drawn once.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache

import cv2
import numpy as np

from situ_gym.scene.model import Product

__all__ = [
    "COLOR_WORDS",
    "MATERIAL_PATTERNS",
    "SHAPES",
    "TILE",
    "TOP_DEPTH",
    "attribute_color",
    "material_pattern",
    "package_shape",
    "product_color",
    "package_texture",
    "package_top_texture",
    "pattern_texture",
    "short_name",
]

TOP_DEPTH = 4  # packages one top tile shows front to back
TILE = 64  # texels per side of every texture tile (a power of two: the renderer wraps with a mask)

# Colour words (lower case) -> RGB. Multi-word entries are matched before single words.
COLOR_WORDS: dict[str, tuple[int, int, int]] = {
    "white": (238, 236, 230), "warm white": (246, 236, 214), "ivory": (240, 232, 208),
    "cream": (236, 224, 196), "oatmeal": (214, 200, 172), "beige": (218, 200, 166),
    "natural": (214, 184, 140), "black": (34, 34, 36), "charcoal": (62, 64, 68),
    "grey": (140, 142, 146), "gray": (140, 142, 146), "smoke": (112, 114, 120),
    "silver": (192, 196, 202), "pewter": (150, 152, 150), "red": (196, 40, 40),
    "burgundy": (116, 28, 44), "oxblood": (98, 24, 28), "pink": (236, 150, 170),
    "blush": (232, 186, 180), "purple": (120, 64, 150), "blue": (52, 96, 186),
    "navy": (30, 42, 86), "teal": (24, 124, 128), "green": (62, 140, 70),
    "sage": (150, 170, 132), "emerald": (20, 122, 82), "forest green": (34, 84, 48),
    "dark green": (30, 74, 44), "silver green": (148, 168, 150), "olive": (112, 116, 48),
    "yellow": (236, 204, 60), "mustard": (200, 158, 40), "gold": (204, 164, 64),
    "brass": (184, 150, 72), "amber": (206, 132, 36), "orange": (232, 120, 40),
    "rust": (168, 74, 38), "terracotta": (192, 100, 70), "cognac": (150, 78, 36),
    "brown": (112, 74, 44), "tan": (196, 156, 110), "walnut": (104, 70, 44),
    "dark walnut": (70, 46, 30), "oak": (196, 156, 104), "cherry": (142, 52, 40),
    "mahogany": (112, 44, 32), "birch": (222, 200, 162), "pine": (214, 176, 118),
    "clear": (206, 224, 230), "copper": (184, 112, 70), "white marble": (232, 232, 228),
    "blue and white": (120, 150, 210), "multicolor": (200, 120, 90), "variegated": (110, 150, 80),
}

# Material words -> pattern names (matched as substrings, longest first).
MATERIAL_PATTERNS: dict[str, str] = {
    "oak": "wood", "walnut": "wood", "birch": "wood", "pine": "wood", "mahogany": "wood", "cherry": "wood",
    "ash": "wood", "wood": "wood", "bamboo": "wood", "mdf": "plain", "laminate": "plain", "cork": "speckle",
    "steel": "metal", "metal": "metal", "brass": "metal", "aluminium": "metal", "iron": "metal",
    "copper": "metal", "pewter": "metal", "silver": "metal",
    "velvet": "velvet", "boucle": "velvet", "faux fur": "velvet", "felt": "fabric",
    "leather": "leather", "ceramic": "ceramic", "porcelain": "ceramic", "terracotta": "ceramic",
    "concrete": "speckle", "marble": "marble", "glass": "glass",
    "rattan": "woven", "seagrass": "woven", "jute": "woven", "hyacinth": "woven", "wicker": "woven",
    "rope": "woven", "wool": "fabric", "linen": "fabric", "cotton": "fabric", "fabric": "fabric",
    "polyester": "fabric", "damask": "fabric", "needlepoint": "fabric", "mesh": "weave",
    "plastic": "plain", "polypropylene": "plain", "silicone": "plain", "rubber": "plain", "tpe": "plain",
    "neoprene": "plain", "paper": "plain",
}

SHAPES = ("can", "bottle", "jar", "box", "bag", "carton", "tub", "produce", "pack", "roll")

# packaging label (or category word) -> shape; checked in order, substrings of the label.
_PACKAGING_SHAPES = (
    ("12-pack", "pack"), ("can", "can"), ("spray", "bottle"), ("jug", "bottle"), ("bottle", "bottle"),
    ("jar", "jar"), ("canister", "tub"), ("tub", "tub"), ("carton", "carton"), ("clamshell", "produce"),
    ("mesh", "produce"), ("loose", "produce"), ("bunch", "produce"), ("box", "box"), ("bag", "bag"),
    ("pouch", "bag"), ("wrap", "bag"), ("wrapper", "bag"),
)
_CATEGORY_SHAPES = (
    ("paper towel", "roll"), ("toilet paper", "roll"), ("soup", "can"), ("beans", "can"), ("soda", "can"),
    ("milk", "carton"), ("juice", "carton"), ("eggs", "carton"), ("yogurt", "tub"), ("ice cream", "tub"),
    ("apple", "produce"), ("banana", "produce"), ("berr", "produce"), ("avocado", "produce"),
    ("greens", "bag"), ("oil", "bottle"), ("sauce", "jar"), ("butter", "jar"), ("jam", "jar"),
)

# Category-typical package colours for the Supermarket (else a brand hue).
_CATEGORY_COLORS = (
    ("milk", (232, 240, 250)), ("orange juice", (246, 150, 30)), ("coffee", (92, 56, 34)),
    ("tea", (70, 128, 80)), ("ice cream", (246, 226, 232)), ("frozen", (70, 130, 200)),
    ("eggs", (226, 204, 170)), ("bananas", (240, 210, 60)), ("apples", (200, 40, 40)),
    ("berries", (150, 30, 80)), ("avocados", (70, 100, 40)), ("salad", (110, 170, 70)),
    ("paper towels", (238, 238, 240)), ("toilet paper", (236, 240, 248)), ("trash", (50, 52, 60)),
    ("detergent", (40, 110, 210)), ("cheese", (240, 196, 70)), ("chocolate", (88, 48, 30)),
)

_PRODUCE_COLORS = {"apples": (196, 36, 36), "bananas": (240, 214, 70), "berries": (120, 24, 64),
                   "avocados": (62, 92, 36), "salad greens": (92, 160, 60)}

_FONT = cv2.FONT_HERSHEY_DUPLEX
_SHELF_DARK = (44, 46, 52)  # what shows between packages of odd shapes (the shelf's shadowed back)


def _hash01(text: str, salt: str = "") -> float:
    digest = hashlib.md5((salt + text).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little") / 2**32


def _hsv_rgb(h: float, s: float, v: float) -> tuple[int, int, int]:
    hsv = np.array([[[h * 179.0, s * 255.0, v * 255.0]]], dtype=np.float32)
    rgb = cv2.cvtColor(np.round(hsv).astype(np.uint8), cv2.COLOR_HSV2RGB)[0, 0]
    return int(rgb[0]), int(rgb[1]), int(rgb[2])


def _mix(a, b, t: float) -> tuple[int, int, int]:
    c = np.clip(np.round(np.asarray(a, float) * (1 - t) + np.asarray(b, float) * t), 0, 255)
    return int(c[0]), int(c[1]), int(c[2])


def _labels(product: Product, key: str) -> list[str]:
    prefix = key + ":"
    return [t[len(prefix):].strip().lower() for t in product.tags if t.lower().startswith(prefix)]


def _color_of(text: str) -> tuple[int, int, int] | None:
    """The RGB of the first colour phrase in ``text`` (longest phrases win), or None."""
    text = " " + re.sub(r"[^a-z ]+", " ", text.lower()) + " "
    for word in sorted(COLOR_WORDS, key=len, reverse=True):
        if f" {word} " in text:
            return COLOR_WORDS[word]
    return None


def attribute_color(product: Product) -> tuple[int, int, int] | None:
    """RGB from the product's ``color:`` label (then its name's colour words), or None."""
    for label in _labels(product, "color") + _labels(product, "colour"):
        rgb = _color_of(label)
        if rgb is not None:
            return rgb
    return None


def material_pattern(product: Product) -> str:
    """Pattern name for the product's ``material:`` label ("plain" when none matches)."""
    for label in _labels(product, "material"):
        for word in sorted(MATERIAL_PATTERNS, key=len, reverse=True):
            if word in label:
                return MATERIAL_PATTERNS[word]
    return "plain"


def product_color(product: Product) -> tuple[int, int, int]:
    """The product's main colour: its colour label, a material's colour, a category colour, else a brand hue."""
    rgb = attribute_color(product)
    if rgb is not None:
        return rgb
    for label in _labels(product, "material"):
        rgb = _color_of(label)
        if rgb is not None:
            return rgb
    cat = product.category.lower()
    for word, rgb in _CATEGORY_COLORS:
        if word in cat:
            return _mix(rgb, _brand_hue(product), 0.12)
    return _brand_hue(product)


def _brand_hue(product: Product) -> tuple[int, int, int]:
    hue = (_hash01(product.brand, "brand") + 0.15 * (_hash01(product.id, "hue") - 0.5)) % 1.0
    return _hsv_rgb(hue, 0.55 + 0.35 * _hash01(product.id, "sat"), 0.55 + 0.35 * _hash01(product.brand, "val"))


def package_shape(product: Product) -> str:
    """One of :data:`SHAPES`, from the ``packaging:`` label, else the category."""
    for label in _labels(product, "packaging"):
        for word, shape in _PACKAGING_SHAPES:
            if word in label:
                return shape
    cat = product.category.lower()
    for word, shape in _CATEGORY_SHAPES:
        if word in cat:
            return shape
    return "box"


def short_name(product: Product) -> str:
    """The name without the brand prefix and the ", size" suffix: what a package says in large type."""
    name = product.name.split(",")[0].strip()
    if name.lower().startswith(product.brand.lower()):
        name = name[len(product.brand):].strip()
    return name or product.category


def _size_text(product: Product) -> str:
    parts = product.name.rsplit(",", 1)
    return parts[1].strip() if len(parts) == 2 else ""


def _wrap(words: list[str], lines: int) -> list[str]:
    """Split words into at most ``lines`` lines of balanced length."""
    if len(words) <= lines:
        return words
    total = sum(len(w) for w in words) + len(words) - 1
    out, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > total / lines + 2 and len(out) < lines - 1:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return out + [cur]


def _text_block(img: np.ndarray, lines: list[str], box: tuple[int, int, int, int], ink, thick_scale=1.0) -> None:
    """Write ``lines`` into ``box`` (x0, y0, x1, y1), each as large as fits the width."""
    x0, y0, x1, y1 = box
    if not lines or x1 - x0 < 4 or y1 - y0 < 4:
        return
    slot = (y1 - y0) / len(lines)
    y = float(y0)
    for line in lines:
        (tw, th), base = cv2.getTextSize(line, _FONT, 1.0, 2)
        scale = min(0.94 * (x1 - x0) / max(tw, 1), 0.8 * slot / (th + base))
        thick = max(1, int(round(2.2 * scale * thick_scale)))
        (tw, th), base = cv2.getTextSize(line, _FONT, scale, thick)
        org = (int(round(x0 + (x1 - x0 - tw) / 2)), int(round(y + (slot + th) / 2)))
        cv2.putText(img, line, org, _FONT, scale, ink, thick, cv2.LINE_AA)
        y += slot


def _ink(bg) -> tuple[int, int, int]:
    lum = 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2]
    return (24, 24, 28) if lum > 140 else (250, 250, 246)


def _package_art(product: Product, width_m: float, height_m: float, pitch_m: float) -> np.ndarray:
    shape = package_shape(product)
    body = product_color(product)
    accent = _hsv_rgb(_hash01(product.brand, "accent"), 0.7, 0.9)
    h = 192
    w = int(np.clip(round(h * pitch_m / max(height_m, 1e-3)), 48, 512))
    pw = int(round(w * min(width_m / max(pitch_m, 1e-6), 1.0)))  # the package; the rest is gap
    img = np.full((h, w, 3), _SHELF_DARK, np.uint8)
    x0 = (w - pw) // 2
    x1 = x0 + pw
    name_lines = _wrap(short_name(product).upper().split(), 3)
    brand, size = product.brand, _size_text(product)
    label_box = (x0 + 3, int(0.24 * h), x1 - 3, int(0.8 * h))
    if shape == "produce":
        fruit = _PRODUCE_COLORS.get(product.category.lower(), body)
        rng = np.random.default_rng(int(_hash01(product.id, "fruit") * 2**31))
        img[:] = _mix(fruit, (20, 20, 20), 0.55)
        r = max(6, pw // 5)
        for _ in range(40):
            cx, cy = int(rng.integers(0, w)), int(rng.integers(int(0.15 * h), h))
            tone = _mix(fruit, (255, 255, 255) if rng.random() < 0.5 else (0, 0, 0), 0.18 * rng.random())
            cv2.circle(img, (cx, cy), r, tone, -1, cv2.LINE_AA)
            cv2.circle(img, (cx - r // 3, cy - r // 3), max(1, r // 4), _mix(tone, (255, 255, 255), 0.5), -1)
        tag = (x0 + 4, int(0.02 * h), x1 - 4, int(0.2 * h))
        cv2.rectangle(img, tag[:2], tag[2:], (250, 248, 236), -1)
        _text_block(img, _wrap(short_name(product).upper().split(), 2), tag, (30, 30, 30))
        return img
    if shape in ("can", "tub", "jar", "pack"):
        top = int({"can": 0.06, "tub": 0.12, "jar": 0.1, "pack": 0.02}[shape] * h)
        cv2.rectangle(img, (x0, top), (x1 - 1, h - 1), body, -1)
        if shape == "jar":
            lid = _mix(accent, (30, 30, 30), 0.3)
            cv2.rectangle(img, (x0 + pw // 8, 0), (x1 - pw // 8, top + 6), lid, -1)
        else:
            rim = _mix(body, (200, 200, 205), 0.6)
            cv2.ellipse(img, ((x0 + x1) // 2, top), (pw // 2, max(3, top)), 0, 180, 360, rim, -1)
        # cylinder shading: darker towards the sides
        xs = np.arange(w)
        shade = 0.72 + 0.28 * np.cos(np.clip((xs - (x0 + x1) / 2) / max(pw / 2, 1), -1, 1) * np.pi / 2)
        img[top:, x0:x1] = np.clip(img[top:, x0:x1] * shade[x0:x1, None], 0, 255).astype(np.uint8)
    elif shape == "bottle":
        neck = pw // 5
        shoulder = int(0.3 * h)
        cap = _mix(accent, (20, 20, 20), 0.2)
        cv2.rectangle(img, ((x0 + x1) // 2 - neck // 2, 0), ((x0 + x1) // 2 + neck // 2, int(0.06 * h)), cap, -1)
        pts = np.array([[(x0 + x1) // 2 - neck // 2, int(0.06 * h)], [(x0 + x1) // 2 + neck // 2, int(0.06 * h)],
                        [x1 - 2, shoulder], [x1 - 2, h - 1], [x0 + 1, h - 1], [x0 + 1, shoulder]], np.int32)
        cv2.fillPoly(img, [pts], body, cv2.LINE_AA)
        label_box = (x0 + 3, int(0.36 * h), x1 - 3, int(0.86 * h))
    elif shape == "bag":
        pts = np.array([[x0 + 3, int(0.08 * h)], [x1 - 4, int(0.08 * h)], [x1 - 1, int(0.3 * h)],
                        [x1 - 2, h - 1], [x0 + 1, h - 1], [x0, int(0.3 * h)]], np.int32)
        cv2.fillPoly(img, [pts], body, cv2.LINE_AA)
        cv2.line(img, (x0 + 3, int(0.1 * h)), (x1 - 4, int(0.1 * h)), _mix(body, (0, 0, 0), 0.35), 3)
    elif shape == "carton":
        peak = int(0.14 * h)
        cv2.fillPoly(img, [np.array([[x0, peak], [(x0 + x1) // 2, 2], [x1 - 1, peak]], np.int32)],
                     _mix(body, (255, 255, 255), 0.3), cv2.LINE_AA)
        cv2.rectangle(img, (x0, peak), (x1 - 1, h - 1), body, -1)
    elif shape == "roll":
        cv2.rectangle(img, (x0, 0), (x1 - 1, h - 1), body, -1)
        for k in range(3):
            cx = x0 + int((k + 0.5) * pw / 3)
            cv2.circle(img, (cx, int(0.9 * h)), max(3, pw // 8), _mix(body, (120, 120, 120), 0.4), -1)
    else:  # box
        cv2.rectangle(img, (x0, 0), (x1 - 1, h - 1), body, -1)
        cv2.rectangle(img, (x0, h - int(0.08 * h)), (x1 - 1, h - 1), accent, -1)
    # brand band on top, name in large type, size at the bottom
    band = (x0 + 2, int(0.1 * h) if shape != "box" else 2, x1 - 2, int(0.22 * h))
    if shape == "bottle":
        band = (x0 + 3, int(0.3 * h), x1 - 3, int(0.38 * h))
    panel = _mix(body, (255, 255, 255), 0.82) if _ink(body)[0] < 100 else _mix(body, (0, 0, 0), 0.55)
    cv2.rectangle(img, label_box[:2], (label_box[2], label_box[3]), panel, -1)
    _text_block(img, name_lines, label_box, _ink(panel))
    _text_block(img, [brand], band, accent if _ink(body)[0] < 100 else _mix(accent, (255, 255, 255), 0.4), 0.6)
    if size:
        _text_block(img, [size], (x0 + 3, int(0.82 * h), x1 - 3, int(0.94 * h)), _ink(body), 0.6)
    return img


def package_texture(product: Product, width_m: float, height_m: float, pitch_m: float | None = None) -> np.ndarray:
    """A ``TILE x TILE`` RGB tile of one facing's front (``pitch_m``: facing spacing, gap included)."""
    pitch = max(float(pitch_m if pitch_m is not None else width_m), float(width_m))
    key = (product.id, product.name, product.brand, product.category, tuple(product.tags),
           round(float(width_m), 4), round(float(height_m), 4), round(pitch, 4))
    tile = _PACKAGES.get(key)
    if tile is None:
        art = _package_art(product, *key[-3:])
        tile = _PACKAGES[key] = cv2.resize(art, (TILE, TILE), interpolation=cv2.INTER_AREA)
        tile.flags.writeable = False
    return tile


_PACKAGES: dict[tuple, np.ndarray] = {}


def package_top_texture(product: Product, width_m: float, depth_m: float, pitch_m: float | None = None) -> np.ndarray:
    """A ``TILE x TILE`` RGB tile of one facing's top, :data:`TOP_DEPTH` packages deep: lids,
    caps, box tops, fruit. Rows of facings seen from above repeat it along the row and
    towards the back.
    """
    pitch = max(float(pitch_m if pitch_m is not None else width_m), float(width_m))
    key = ("top", product.id, product.name, product.brand, product.category, tuple(product.tags),
           round(float(width_m), 4), round(float(depth_m), 4), round(pitch, 4))
    tile = _PACKAGES.get(key)
    if tile is None:
        tile = _PACKAGES[key] = _top_art(product, *key[-3:])
        tile.flags.writeable = False
    return tile


def _top_art(product: Product, width_m: float, depth_m: float, pitch_m: float) -> np.ndarray:
    n, k = TILE, TOP_DEPTH
    shape = package_shape(product)
    body = product_color(product)
    accent = _hsv_rgb(_hash01(product.brand, "accent"), 0.7, 0.9)
    img = np.full((n, n, 3), _SHELF_DARK, np.uint8)
    pw = max(2, int(round(n * min(width_m / max(pitch_m, 1e-6), 1.0))) - 2)  # the package across u
    x0 = (n - pw) // 2
    row = n // k  # texels per package along v
    if shape == "produce":
        fruit = _PRODUCE_COLORS.get(product.category.lower(), body)
        rng = np.random.default_rng(int(_hash01(product.id, "top") * 2**31))
        img[:] = _mix(fruit, (20, 20, 20), 0.5)
        for _ in range(48):
            c = (int(rng.integers(0, n)), int(rng.integers(0, n)))
            tone = _mix(fruit, (255, 255, 255), 0.25 * rng.random())
            cv2.circle(img, c, n // 9, tone, -1, cv2.LINE_AA)
        return img
    for j in range(k):
        y0, cy = j * row, j * row + row // 2
        if shape in ("can", "jar", "tub", "bottle", "roll"):
            r = max(2, min(pw, row) // 2 - 1)
            cap = {"can": _mix(body, (205, 205, 210), 0.7), "roll": _mix(body, (120, 120, 120), 0.4)}.get(
                shape, _mix(accent, (30, 30, 30), 0.3))
            if shape == "bottle":
                cv2.circle(img, (n // 2, cy), r, _mix(body, (0, 0, 0), 0.25), -1, cv2.LINE_AA)
                r = max(1, r // 3)
            cv2.circle(img, (n // 2, cy), r, cap, -1, cv2.LINE_AA)
        else:
            top = _mix(body, (255, 255, 255), 0.12) if shape != "bag" else _mix(body, (0, 0, 0), 0.15)
            cv2.rectangle(img, (x0, y0 + 1), (x0 + pw - 1, y0 + row - 2), top, -1)
            cv2.rectangle(img, (x0, y0 + 1), (x0 + pw - 1, y0 + max(2, row // 6)), accent, -1)
    return img


@cache
def pattern_texture(rgb: tuple[int, int, int], pattern: str, seed: int = 0) -> np.ndarray:
    """A ``TILE x TILE`` RGB tile of a material pattern in colour ``rgb`` (tiles seamlessly)."""
    rng = np.random.default_rng(seed)
    n = TILE
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) / n
    base = np.asarray(rgb, np.float32)
    if pattern == "wood":  # grain: wavy stripes along u
        phase = 2 * np.pi * (6 * yy + 0.35 * np.sin(2 * np.pi * (xx + rng.random())))
        tone = 1.0 + 0.12 * np.sin(phase) + 0.05 * np.sin(5 * phase)
    elif pattern == "metal":  # brushed: fine streaks along u
        streak = rng.normal(0, 1, n).astype(np.float32)
        tone = 1.0 + 0.06 * streak[:, None] + 0.08 * np.cos(2 * np.pi * yy)
    elif pattern in ("velvet", "leather"):  # soft sheen, a few darker creases
        tone = 1.0 + 0.1 * np.sin(2 * np.pi * (xx + 0.5 * yy)) * (0.6 if pattern == "leather" else 1.0)
        tone = tone + rng.normal(0, 0.02 if pattern == "velvet" else 0.035, (n, n)).astype(np.float32)
    elif pattern == "ceramic":  # glaze with a highlight band
        tone = 1.0 + 0.14 * np.exp(-(((xx - 0.3) / 0.08) ** 2)) + 0.03 * np.sin(2 * np.pi * 2 * yy)
    elif pattern in ("woven", "weave", "fabric"):  # basket weave / textile grid
        k = {"woven": 8, "weave": 16, "fabric": 32}[pattern]
        cell = (np.floor(xx * k) + np.floor(yy * k)) % 2
        amp = {"woven": 0.16, "weave": 0.1, "fabric": 0.05}[pattern]
        tone = 1.0 + amp * (2 * cell - 1) * np.sin(np.pi * ((xx * k) % 1.0))
    elif pattern == "marble":
        phase = 2 * np.pi * (2 * xx + 2 * yy + 0.4 * np.sin(2 * np.pi * 3 * yy))
        tone = 1.0 - 0.25 * np.exp(-8 * (np.sin(phase) ** 2) - 0.5)
    elif pattern == "speckle":
        tone = 1.0 + rng.normal(0, 0.06, (n, n)).astype(np.float32)
    elif pattern == "glass":
        tone = 1.0 + 0.18 * ((xx + yy) % 0.5 < 0.06)
    else:
        tone = 1.0 + 0.02 * np.sin(2 * np.pi * yy)
    img = np.round(np.clip(base[None, None, :] * tone[..., None], 0, 255)).astype(np.uint8)
    img.flags.writeable = False
    return img
