"""The tokens of an argument spec, as `tokenize` gives them but with offsets into the text: by a
regex for the everyday spec, by `tokenize` itself for the rest. The parser (`argspec`) parses the
text wrapped as a call, ``_(`` text ``\n)``; so do these, for the same offsets."""

from __future__ import annotations

import io
import re
import tokenize

PREFIX = "_("
SUFFIX = "\n)"  # the newline ends a trailing comment
Token = tuple[int, int, int, str]  # (type, start, end, string), offsets into the text


# A regex tokenizer for the everyday spec (names, numbers, plain strings, brackets and the few
# operators made of these characters): much faster than `tokenize`, which took 0.17 s of a
# 50k-equation model's 43 kB spec. Anything else (line breaks, comments, string prefixes,
# escapes, 0x/1j/1_0 numbers, other operators) is left to `tokenize`; a test checks that both
# give the same tokens.
_FAST_TOKEN = re.compile(
    r"""[ \t]+
    | (?P<name>[A-Za-z_]\w*)
    | (?P<number>(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)
    | (?P<string>'[^'\\\n]*'|"[^"\\\n]*")
    | (?P<op>\*\*=|\.\.\.|->|:=|==|\+=|-=|\*=|\*\*|<<=|>>=|<<|>>|<=|>=|[\[\](){},:=*.+\-<>])""",
    re.VERBOSE | re.ASCII,
)
_FAST_KIND = {"name": tokenize.NAME, "number": tokenize.NUMBER, "string": tokenize.STRING, "op": tokenize.OP}
_AFTER_NUMBER = re.compile(r"[\w.]", re.ASCII)  # 1j, 0x1, 1_0, 1.2.3: tokenize's business
_LEADING_ZERO = re.compile(r"0\d")


def tokens_of(text: str) -> tuple[list[Token], bool]:
    """`python_tokens(text)`, by the fast path where it applies."""
    fast = fast_tokens(text)
    return (fast, False) if fast is not None else python_tokens(text)


def fast_tokens(text: str) -> list[Token] | None:
    """`python_tokens(text)[0]` for a text of the everyday kind, else None."""
    if "<>" in text:  # one token since Python 3.12, two before
        return None
    tokens: list[Token] = []
    match = _FAST_TOKEN.match
    pos, n = 0, len(text)
    prev_name_end = -1
    while pos < n:
        m = match(text, pos)
        if m is None:
            return None
        kind = m.lastgroup
        end = m.end()
        if kind is not None:
            string = m.group()
            if kind == "number" and ((end < n and _AFTER_NUMBER.match(text, end)) or _LEADING_ZERO.match(string)):
                return None
            if kind == "string" and (prev_name_end == pos or (end - pos == 2 and text[end : end + 1] == string[0])):
                return None  # b'..', f'..', r'..' (one token for tokenize); a triple-quoted string
            if kind == "name":
                prev_name_end = end
            tokens.append((_FAST_KIND[kind], pos, end, string))
        pos = end
    return tokens


def python_tokens(text: str) -> tuple[list[Token], bool]:
    """`tokenize`'s tokens of `text` (offsets into it; no NL/NEWLINE/COMMENT), and whether it
    stopped at an error inside the text (the parser then reports it)."""
    tokens: list[Token] = []
    wrapped = PREFIX + text + SUFFIX
    starts = [0] + [i + 1 for i, c in enumerate(wrapped) if c == "\n"]
    limit = len(text)

    def offset(row: int, col: int) -> int:
        return starts[min(max(row, 1), len(starts)) - 1] + col - len(PREFIX)

    try:
        for tok in tokenize.generate_tokens(io.StringIO(wrapped).readline):
            start, end = offset(*tok.start), offset(*tok.end)
            if tok.type == tokenize.ERRORTOKEN and not tok.string.isspace():
                return tokens, True
            if 0 <= start < limit and tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                tokens.append((tok.type, start, min(end, limit), tok.string))
    except tokenize.TokenError as exc:
        row, col = exc.args[1] if len(exc.args) > 1 else (len(starts), 0)
        return tokens, offset(row, col) < limit
    except SyntaxError as exc:  # IndentationError, and the C tokenizer's errors (3.12+)
        return tokens, offset(exc.lineno or 1, (exc.offset or 1) - 1) < limit
    return tokens, False
