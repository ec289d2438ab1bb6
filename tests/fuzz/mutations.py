"""Mutations of real source files: the edits a broken, hostile or odd checkout is made of.

A mutation is ``(kind, a, b)`` with ``a`` and ``b`` in ``[0, 1)``: positions as fractions of the
current text (of its tokens, of its lines), so one drawn list applies to a file of any size and
shrinks well. Applied to bytes; token and line edits work on the text decoded with
``surrogateescape``, so undecodable bytes survive them."""

from __future__ import annotations

import io
import tokenize

KINDS: tuple[str, ...] = (
    "delete-token", "duplicate-token", "swap-lines", "random-bytes", "truncate", "crlf", "bom",
    "tabs", "null-bytes",
)
BOMS: tuple[bytes, ...] = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")

Mutation = tuple[str, float, float]


def _tokens(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the tokens of ``text`` that have text, as far as
    the tokenizer gets (a broken file still has its leading tokens)."""
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.string and token.type not in (tokenize.ENDMARKER, tokenize.DEDENT):
                (l1, c1), (l2, c2) = token.start, token.end
                if l1 - 1 < len(starts) and l2 - 1 < len(starts):
                    spans.append((starts[l1 - 1] + c1, starts[l2 - 1] + c2))
    except (tokenize.TokenError, SyntaxError):
        pass
    return spans


def _index(fraction: float, size: int) -> int:
    return min(int(fraction * size), max(size - 1, 0))


def mutate(data: bytes, mutation: Mutation) -> bytes:
    """``data`` with one mutation applied."""
    kind, a, b = mutation
    if kind == "random-bytes":
        at = _index(a, len(data) + 1)
        noise = bytes((int(b * 251) * (i + 7)) % 256 for i in range(1 + int(b * 16)))
        return data[:at] + noise + data[at:]
    if kind == "truncate":
        return data[: _index(a, len(data) + 1)]
    if kind == "null-bytes":
        at = _index(a, len(data) + 1)
        return data[:at] + b"\0" * (1 + int(b * 3)) + data[at:]
    if kind == "bom":
        return BOMS[_index(a, len(BOMS))] + data
    if kind == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n" if b < 0.7 else b"\r")
    text = data.decode("utf-8", "surrogateescape")
    if kind == "tabs":
        lines = text.splitlines(keepends=True)
        return "".join(
            "\t" * ((len(line) - len(line.lstrip(" "))) // 4) + line.lstrip(" ")
            if (i / max(len(lines), 1)) >= a else line
            for i, line in enumerate(lines)
        ).encode("utf-8", "surrogateescape")
    if kind == "swap-lines":
        lines = text.splitlines(keepends=True)
        if len(lines) > 1:
            i, j = _index(a, len(lines)), _index(b, len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines).encode("utf-8", "surrogateescape")
    spans = _tokens(text)
    if not spans:
        return data
    start, end = spans[_index(a, len(spans))]
    if kind == "delete-token":
        text = text[:start] + text[end:]
    else:  # duplicate-token
        text = text[:end] + " " * int(b * 2) + text[start:end] + text[end:]
    return text.encode("utf-8", "surrogateescape")
