"""What a text-observation model saw, drawn with Crafter's own textures.

The local map view of a task-app text observation (a grid of material names or semantic ids) as
an RGB image."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

#: Crafter's semantic ids (``crafter.engine.SemanticView``): 0 is nothing, then its materials in
#: ``crafter/data.yaml`` order, then the object types the env registers, in its order.
SEMANTIC_NAMES = (
    "unknown",
    "water",
    "grass",
    "stone",
    "path",
    "sand",
    "tree",
    "lava",
    "coal",
    "iron",
    "diamond",
    "table",
    "furnace",
    "player",
    "cow",
    "zombie",
    "skeleton",
    "arrow-up",
    "plant",
)
#: Names in text views that are not texture file names.
ALIASES = {"void": "unknown", "none": "unknown", "arrow": "arrow-up", "sapling": "plant"}
#: Objects Crafter draws over the material beneath; a text view does not say which, so grass.
OBJECTS = {"player", "cow", "zombie", "skeleton", "arrow-up", "plant", "plant-ripe", "plant-young"}
#: Pixels per map cell.
CELL = 16


def assets_folder() -> Path:
    """The crafter package's textures folder.

    Returns:
        The folder.
    """
    import crafter

    return Path(crafter.__file__).parent / "assets"


@lru_cache(maxsize=64)
def texture(name: str, size: int = CELL) -> np.ndarray:
    """A Crafter texture as (size, size, 3) uint8: objects composited on grass, the rest on black;
    ``unknown`` (black) for a name Crafter has no texture of.

    Args:
        name: A texture name.
        size: The side in pixels.

    Returns:
        The image.
    """
    from PIL import Image

    path = assets_folder() / f"{name}.png"
    if not path.exists():
        return np.zeros((size, size, 3), np.uint8)
    image = Image.open(path).convert("RGBA").resize((size, size), Image.Resampling.NEAREST)
    rgba = np.asarray(image, dtype=np.float32)
    under = texture("grass", size).astype(np.float32) if name in OBJECTS else 0.0
    alpha = rgba[..., 3:] / 255.0
    return (rgba[..., :3] * alpha + under * (1.0 - alpha)).astype(np.uint8)


def parse_view(text: str) -> list[list[str]]:
    """The grid of a map view text: the longest run of lines with the same number of tokens
    (headers such as ``Local Map View (5x5):`` and other text are skipped).

    Args:
        text: A map view as the task app writes it.

    Returns:
        The grid's tokens, row by row (empty when none is found).
    """
    best: list[list[str]] = []
    run: list[list[str]] = []
    for line in text.splitlines() + [""]:
        tokens = line.split()
        if tokens and not line.rstrip().endswith(":") and (not run or len(tokens) == len(run[0])):
            run.append(tokens)
            continue
        if len(run) > len(best):
            best = run
        run = [tokens] if tokens and not line.rstrip().endswith(":") else []
    return best


def cell_name(token: str) -> str:
    """The texture name of one grid token (a material name or a semantic id).

    Args:
        token: A grid token.

    Returns:
        The texture name (``unknown`` when none fits).
    """
    if token.isdigit():
        index = int(token)
        return SEMANTIC_NAMES[index] if index < len(SEMANTIC_NAMES) else "unknown"
    name = token.lower()
    return ALIASES.get(name, name)


def render_view(text: str | None, shape: tuple[int, int]) -> np.ndarray:
    """A map view text drawn as an RGB image of ``shape`` cells (rows, columns); a missing or
    unreadable view is black. The grid is centred when smaller than ``shape``.

    Args:
        text: A map view, or None.
        shape: (rows, columns) in cells.

    Returns:
        The (H, W, 3) uint8 image.
    """
    rows, columns = shape
    image = np.zeros((rows * CELL, columns * CELL, 3), np.uint8)
    grid = parse_view(text) if text else []
    top, left = (rows - len(grid)) // 2, (columns - (len(grid[0]) if grid else 0)) // 2
    for r, tokens in enumerate(grid[:rows]):
        for c, token in enumerate(tokens[:columns]):
            y, x = (top + r) * CELL, (left + c) * CELL
            image[y : y + CELL, x : x + CELL] = texture(cell_name(token))
    return image


def render_views(views: list[str | None]) -> np.ndarray:
    """Every view of an episode drawn at one size (the largest grid): (n, H, W, 3) uint8.

    Args:
        views: The episode's map views (None where missing).

    Returns:
        The images.
    """
    grids = [parse_view(v) if v else [] for v in views]
    rows = max((len(g) for g in grids), default=0) or 1
    columns = max((len(g[0]) for g in grids if g), default=0) or 1
    cache: dict[str | None, np.ndarray] = {}
    frames = np.empty((len(views), rows * CELL, columns * CELL, 3), np.uint8)
    for i, view in enumerate(views):
        if view not in cache:
            cache[view] = render_view(view, (rows, columns))
        frames[i] = cache[view]
    return frames
