"""A picture of a map: hexes, labels, terrain, hexside features, units, markers, and lines of sight.

The picture is first a list of shapes (``scene``), drawn in pure Python as SVG (``svg``: the workbench shows
it in the page, each hex carrying its label as ``data-hex``) or with matplotlib as PNG (``png``, the optional
``plot`` extra). Colours are for reading the board, not the game's: a terrain the palette does not know gets a
colour of its own from its name, the same every time.
"""

from __future__ import annotations

import math
import zlib
from html import escape

from ..model.hexmap import index_of
from ..model.values import Record
from ..runtime.board import recording_lines

SIZE = 36.0
"""A hex's corner-to-centre distance, in picture units (pixels in the SVG)."""

_KNOWN = (
    # (words in a terrain's name, colour): the first that matches names the colour
    (("open", "clear", "grass", "field"), "#eef3d9"), (("wood", "forest", "jungle"), "#7fb069"),
    (("orchard",), "#b5d99c"), (("brush", "scrub", "rough"), "#c8d5a0"), (("grain", "wheat", "crop"), "#f0dc82"),
    (("hill", "crest", "slope"), "#d9b98c"), (("stone", "building", "town", "city", "village", "house"), "#b0aaa4"),
    (("marsh", "swamp", "bog"), "#9cc5b5"), (("water", "river", "stream", "lake", "pond", "sea"), "#8ec5e8"),
    (("road", "path", "track"), "#d8cfc0"), (("rubble",), "#a39585"),
)

_SIDE_COLOURS = (
    (("wall",), "#5b5550"), (("hedge", "bocage"), "#2f7d32"), (("road", "path", "track"), "#a07840"),
    (("stream", "river", "water"), "#2f7fc1"), (("cliff",), "#7a4b2a"), (("bridge",), "#303030"),
)

LOS_COLOUR = "#d62728"


def _pick(name: str, table, fallback_light: bool) -> str:
    low = name.lower()
    for words, colour in table:
        if any(w in low for w in words):
            return colour
    h = zlib.crc32(name.encode()) % 360             # a colour of its own, the same every time
    return _hsl(h, 45, 75 if fallback_light else 35)


def _hsl(h: float, s: float, light: float) -> str:
    s, light = s / 100, light / 100
    c = (1 - abs(2 * light - 1)) * s
    x = c * (1 - abs((h / 60) % 2 - 1))
    m = light - c / 2
    r, g, b = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][int(h // 60) % 6]
    return "#" + "".join(f"{round((v + m) * 255):02x}" for v in (r, g, b))


def terrain_colour(name) -> str:
    return "#ffffff" if name is None else _pick(str(name), _KNOWN, True)


def side_colour(features) -> str:
    return _pick(str(features[0]), _SIDE_COLOURS, False) if features else "#000000"


def _centre(cube, orientation: str) -> tuple[float, float]:
    q, r = cube[0], cube[1]
    if orientation == "flat":
        return SIZE * 1.5 * q, SIZE * math.sqrt(3) * (r + q / 2)
    return SIZE * math.sqrt(3) * (q + r / 2), SIZE * 1.5 * r


def _corners(c, orientation: str) -> list[tuple[float, float]]:
    start = 0 if orientation == "flat" else 30
    return [(c[0] + SIZE * math.cos(math.radians(start + 60 * i)), c[1] + SIZE * math.sin(math.radians(start + 60 * i)))
            for i in range(6)]


def adjudicated_lines(run) -> tuple:
    """``run()`` (an adjudication, giving its Outcome) and the lines of sight it worked out: every ``map_line``
    it called, and any line in its result."""
    with recording_lines() as drawn:
        outcome = run()
    return outcome, find_lines(tuple(drawn) + (outcome.value,))


def find_lines(value, found: list | None = None, depth: int = 0) -> list[Record]:
    """Every line of sight (a ``map_line`` result) inside a value, in order, each once."""
    found = [] if found is None else found
    if depth > 64:
        return found
    if value.__class__ is Record:
        if {"from", "to", "hexes", "hexsides", "along", "vertices", "path"} <= value.keys():
            if value not in found:
                found.append(value)
            return found
        for v in value.values():
            find_lines(v, found, depth + 1)
    elif value.__class__ is tuple:
        for v in value:
            find_lines(v, found, depth + 1)
    return found


def scene(board: Record, lines=(), title: str | None = None) -> dict:
    """The shapes of the picture: ``{"width", "height", "shapes": [...]}`` with y growing downward."""
    idx = index_of(board)
    o = idx.orientation
    centres = {label: _centre(c, o) for label, c in idx.cube_of.items()}
    xs = [x for x, _ in centres.values()]
    ys = [y for _, y in centres.values()]
    top = 28 if title else 8
    dx, dy = SIZE * 1.2 - min(xs), SIZE * 1.2 - min(ys) + top
    centres = {k: (x + dx, y + dy) for k, (x, y) in centres.items()}
    shapes: list[dict] = []
    crossed = {label for ln in lines for label in ln["between"]}
    ends = {label for ln in lines for label in (ln["from"], ln["to"])}
    terrains: dict[str, str] = {}
    for label, h in idx.hexes.items():
        c = centres[label]
        terrains.setdefault(str(h["terrain"]) if h["terrain"] is not None else "(not given)",
                            terrain_colour(h["terrain"]))
        shapes.append({"kind": "polygon", "points": _corners(c, o), "fill": terrain_colour(h["terrain"]),
                       "stroke": "#6b6b6b", "width": 1, "hex": label,
                       "title": f"{label}: {h['terrain']}" + (f", elevation {h['elevation']}" if h["elevation"] else "")
                       + (f", {', '.join(h['features'])}" if h["features"] else "")})
        if label in crossed or label in ends:
            shapes.append({"kind": "polygon", "points": _corners(c, o), "fill": LOS_COLOUR,
                           "opacity": 0.28 if label in crossed else 0.14, "stroke": LOS_COLOUR, "width": 1.5})
        shapes.append({"kind": "text", "at": (c[0], c[1] - SIZE * 0.62), "text": label, "size": 8, "colour": "#333"})
        if h["elevation"]:
            shapes.append({"kind": "text", "at": (c[0], c[1] + SIZE * 0.6), "text": f"elev {h['elevation']}",
                           "size": 7, "colour": "#5a3d1e", "bold": True})
    for s in board["hexsides"]:
        a, b = s["hexes"]
        shapes.append(_side(centres, a, b, side_colour(s["features"]), 4, "/".join(s["features"])))
    for ln in lines:
        for side in ln["hexsides"]:
            if all(x in centres for x in side["hexes"]):
                shapes.append(_side(centres, side["hexes"][0], side["hexes"][1], "#ff9900", 3, "crossed"))
        for side in ln["along"]:
            if all(x in centres for x in side["hexes"]):
                shapes.append(_side(centres, side["hexes"][0], side["hexes"][1], "#ffd700", 5, "along"))
        a, b = centres[ln["from"]], centres[ln["to"]]
        shapes.append({"kind": "line", "from": a, "to": b, "colour": LOS_COLOUR, "width": 2.5})
        for v in ln["vertices"]:
            points = [centres[x] for x in v["hexes"] if x in centres]
            if len(points) == 3:
                shapes.append({"kind": "circle", "at": (sum(p[0] for p in points) / 3, sum(p[1] for p in points) / 3),
                               "r": 3.5, "fill": "#ffd700", "stroke": LOS_COLOUR, "width": 1})
    for label, markers in idx.markers_in.items():
        c = centres[label]
        for i, k in enumerate(markers):
            x, y = c[0] + SIZE * 0.45, c[1] + SIZE * (0.1 + 0.32 * i)
            shapes.append({"kind": "polygon", "points": [(x, y - 6), (x + 6, y), (x, y + 6), (x - 6, y)],
                           "fill": "#444", "stroke": "#000", "width": 0.5, "title": f"{k['kind']} in {label}"})
            shapes.append({"kind": "text", "at": (x, y + 14), "text": str(k["kind"])[:8], "size": 6, "colour": "#222"})
    for label, units in idx.units_in.items():
        c = centres[label]
        half = SIZE * 0.25
        shown = units[:3]
        for i, u in enumerate(shown):
            x, y = c[0] + (i - (len(shown) - 1) / 2) * (2 * half + 2), c[1] + SIZE * 0.08
            side = str(u.get("side", ""))
            shapes.append({"kind": "polygon", "points": [(x - half, y - half), (x + half, y - half),
                                                          (x + half, y + half), (x - half, y + half)],
                           "fill": _pick(side, (), False) if side else "#1f4e79", "stroke": "#000", "width": 1,
                           "title": f"unit {u['id']} in {label}" + (f", facing {u['facing']}" if "facing" in u else "")
                           + (f", {side}" if side else "")})
            shapes.append({"kind": "text", "at": (x, y + 2.5), "text": str(u["id"])[:3], "size": 7, "colour": "#fff",
                           "bold": True})
            if u.get("facing"):
                d = idx.directions[u["facing"] - 1]
                to = _centre(d, o)
                n = math.hypot(*to)
                shapes.append({"kind": "line", "from": (x + to[0] / n * half, y + to[1] / n * half),
                               "to": (x + to[0] / n * half * 1.7, y + to[1] / n * half * 1.7),
                               "colour": "#000", "width": 2.5})
        if len(units) > 3:
            shapes.append({"kind": "text", "at": (c[0], c[1] + SIZE * 0.62), "text": f"+{len(units) - 3} more",
                           "size": 7, "colour": "#000"})
    width = max(x for x, _ in centres.values()) + SIZE * 1.2
    height = max(y for _, y in centres.values()) + SIZE * 1.2
    legend = sorted(terrains.items())
    ly = height + 4
    for i, (name, colour) in enumerate(legend):
        x = 10 + (i % 4) * 150
        y = ly + (i // 4) * 16
        shapes.append({"kind": "polygon", "points": [(x, y), (x + 12, y), (x + 12, y + 12), (x, y + 12)],
                       "fill": colour, "stroke": "#666", "width": 0.5})
        shapes.append({"kind": "text", "at": (x + 16, y + 10), "text": name, "size": 9, "colour": "#222",
                       "anchor": "start"})
    height = ly + ((len(legend) + 3) // 4) * 16 + 6
    if title:
        shapes.append({"kind": "text", "at": (10, 18), "text": title, "size": 12, "colour": "#000",
                       "anchor": "start", "bold": True})
    return {"width": max(width, 620 if legend else width), "height": height, "shapes": shapes}


def _side(centres, a: str, b: str, colour: str, width: float, title: str) -> dict:
    """The hexside between two hexes drawn as a thick segment: its ends are the corners the hexes share."""
    ca, cb = centres[a], centres[b]
    mx, my = (ca[0] + cb[0]) / 2, (ca[1] + cb[1]) / 2
    vx, vy = cb[0] - ca[0], cb[1] - ca[1]
    n = math.hypot(vx, vy)
    half = SIZE / 2                                   # a side is as long as the corner-to-centre distance
    px, py = -vy / n * half, vx / n * half
    return {"kind": "line", "from": (mx - px, my - py), "to": (mx + px, my + py), "colour": colour, "width": width,
            "title": f"{a}|{b}: {title}"}


def svg(sc: dict) -> str:
    """The scene as an SVG document (pure Python)."""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="umpire-board" viewBox="0 0 {sc["width"]:.0f} '
           f'{sc["height"]:.0f}" width="{sc["width"]:.0f}" height="{sc["height"]:.0f}" '
           f'font-family="sans-serif">', '<rect width="100%" height="100%" fill="#fafafa"/>']
    for s in sc["shapes"]:
        title = f'<title>{escape(s["title"])}</title>' if s.get("title") else ""
        if s["kind"] == "polygon":
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in s["points"])
            extra = f' class="hex" data-hex="{escape(s["hex"])}"' if s.get("hex") else ""
            opacity = f' fill-opacity="{s["opacity"]}"' if "opacity" in s else ""
            out.append(f'<polygon points="{pts}" fill="{s["fill"]}"{opacity} stroke="{s["stroke"]}" '
                       f'stroke-width="{s["width"]}"{extra}>{title}</polygon>')
        elif s["kind"] == "line":
            (x1, y1), (x2, y2) = s["from"], s["to"]
            cls = ' class="los"' if s["colour"] == LOS_COLOUR else ""
            out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{s["colour"]}" '
                       f'stroke-width="{s["width"]}" stroke-linecap="round"{cls}>{title}</line>')
        elif s["kind"] == "circle":
            x, y = s["at"]
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{s["r"]}" fill="{s["fill"]}" stroke="{s["stroke"]}" '
                       f'stroke-width="{s["width"]}"/>')
        else:
            x, y = s["at"]
            anchor = s.get("anchor", "middle")
            weight = ' font-weight="bold"' if s.get("bold") else ""
            out.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{s["size"]}" fill="{s["colour"]}" '
                       f'text-anchor="{anchor}"{weight}>{escape(s["text"])}</text>')
    out.append("</svg>")
    return "\n".join(out)


def png(sc: dict, path) -> None:
    """The scene drawn with matplotlib into a PNG file (ImportError when matplotlib is missing)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, Polygon
    dpi = 100
    fig = plt.figure(figsize=(sc["width"] / dpi * 1.5, sc["height"] / dpi * 1.5), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, sc["width"])
    ax.set_ylim(sc["height"], 0)
    ax.set_aspect("equal")
    ax.axis("off")
    scale = 1.5
    for s in sc["shapes"]:
        if s["kind"] == "polygon":
            ax.add_patch(Polygon(s["points"], closed=True, facecolor=s["fill"], alpha=s.get("opacity"),
                                 edgecolor=s["stroke"], linewidth=s["width"] * scale * 0.75))
        elif s["kind"] == "line":
            (x1, y1), (x2, y2) = s["from"], s["to"]
            ax.plot([x1, x2], [y1, y2], color=s["colour"], linewidth=s["width"] * scale * 0.75,
                    solid_capstyle="round")
        elif s["kind"] == "circle":
            ax.add_patch(Circle(s["at"], s["r"], facecolor=s["fill"], edgecolor=s["stroke"], linewidth=s["width"]))
        else:
            x, y = s["at"]
            ax.text(x, y, s["text"], fontsize=s["size"] * scale * 0.75, color=s["colour"],
                    ha={"middle": "center", "start": "left"}[s.get("anchor", "middle")], va="baseline",
                    fontweight="bold" if s.get("bold") else "normal")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)

