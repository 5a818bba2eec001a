"""Render `tmux capture-pane -e -p` output (text with SGR colour escapes) to a PNG with Pillow.

    python3 render_ansi.py screen.ansi out.png
"""

from __future__ import annotations

import re
import sys
import unicodedata

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SIZE = 15
FG, BG = (224, 226, 234), (20, 22, 27)  # Neovim's default colorscheme, Normal
BASE16 = [(0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16), (36, 114, 200), (188, 63, 188),
          (17, 168, 205), (229, 229, 229), (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67),
          (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255)]
SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def xterm256(n: int) -> tuple[int, int, int]:
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
    v = 8 + (n - 232) * 10
    return v, v, v


def apply(params: str, st: dict) -> None:
    parts = [p for p in re.split(r"[;]", params)] if params else ["0"]
    i = 0
    while i < len(parts):
        p = parts[i]
        sub = p.split(":")
        code = int(sub[0] or 0)
        if code == 0:
            st.update(fg=None, bg=None, bold=False, underline=False, reverse=False)
        elif code == 1:
            st["bold"] = True
        elif code == 22:
            st["bold"] = False
        elif code == 4:
            st["underline"] = len(sub) == 1 or sub[1] != "0"
        elif code == 24:
            st["underline"] = False
        elif code == 7:
            st["reverse"] = True
        elif code == 27:
            st["reverse"] = False
        elif 30 <= code <= 37 or 90 <= code <= 97:
            st["fg"] = BASE16[code - 30 if code < 90 else code - 90 + 8]
        elif 40 <= code <= 47 or 100 <= code <= 107:
            st["bg"] = BASE16[code - 40 if code < 100 else code - 100 + 8]
        elif code == 39:
            st["fg"] = None
        elif code == 49:
            st["bg"] = None
        elif code in (38, 48, 58):
            key = {38: "fg", 48: "bg", 58: "ul"}[code]
            if len(sub) > 1:  # colon form 38:2::r:g:b or 38:5:n
                vals = [int(v) for v in sub[1:] if v != ""]
                mode, vals = vals[0], vals[1:]
            else:
                mode = int(parts[i + 1])
                n = 3 if mode == 2 else 1
                vals = [int(v) for v in parts[i + 2:i + 2 + n]]
                i += 1 + n
            colour = tuple(vals[-3:]) if mode == 2 else xterm256(vals[0])
            if key != "ul":
                st[key] = colour
        i += 1


def cells(text: str):
    """(char, state) per screen cell; wide characters take two."""
    st = dict(fg=None, bg=None, bold=False, underline=False, reverse=False)
    out = []
    pos = 0
    for m in SGR.finditer(text + "\x1b[m"):
        for ch in text[pos:m.start()]:
            out.append((ch, dict(st)))
            if unicodedata.east_asian_width(ch) in "WF":
                out.append(("", dict(st)))
        apply(m.group(1), st)
        pos = m.end()
    return out


def main(src: str, dst: str) -> None:
    with open(src, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").split("\n")
    rows = [cells(re.sub(r"\x1b\[[0-9;?]*[A-Za-ln-z]", "", line)) for line in lines]
    font, bold = ImageFont.truetype(FONT, SIZE), ImageFont.truetype(BOLD, SIZE)
    cw = round(font.getlength("M"))
    ch = round(SIZE * 1.35)
    cols = max(len(r) for r in rows)
    pad = 12
    img = Image.new("RGB", (cols * cw + 2 * pad, len(rows) * ch + 2 * pad), BG)
    draw = ImageDraw.Draw(img)
    for y, row in enumerate(rows):
        for x, (char, st) in enumerate(row):
            fg, bg = st["fg"] or FG, st["bg"] or BG
            if st["reverse"]:
                fg, bg = bg, fg
            left, top = pad + x * cw, pad + y * ch
            wide = char and unicodedata.east_asian_width(char) in "WF"
            if bg != BG:
                draw.rectangle([left, top, left + cw * (2 if wide else 1) - 1, top + ch - 1], fill=bg)
            if char.strip():
                draw.text((left, top + (ch - SIZE) // 2 - 1), char, font=bold if st["bold"] else font, fill=fg)
            if st["underline"]:
                draw.line([left, top + ch - 2, left + cw - 1, top + ch - 2], fill=fg)
    img.save(dst, optimize=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
