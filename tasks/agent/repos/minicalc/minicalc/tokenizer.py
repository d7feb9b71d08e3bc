"""Splits an expression into tokens: numbers, names, operators and parentheses."""

from dataclasses import dataclass

from minicalc.errors import CalcError

OPERATORS = ("**", "+", "-", "*", "/", "%", "(", ")", ",")


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "name", "op" or "end"
    value: object
    position: int


def tokenize(text):
    tokens = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch.isdigit() or (ch == "." and text[i + 1 : i + 2].isdigit()):
            start = i
            while i < len(text) and (text[i].isdigit() or text[i] == "."):
                i += 1
            literal = text[start:i]
            if literal.count(".") > 1:
                raise CalcError(f"malformed number {literal!r}", start)
            value = float(literal) if "." in literal else int(literal)
            tokens.append(Token("number", value, start))
            continue
        if ch.isalpha() or ch == "_":
            start = i
            while i < len(text) and (text[i].isalnum() or text[i] == "_"):
                i += 1
            tokens.append(Token("name", text[start:i], start))
            continue
        for op in OPERATORS:
            if text.startswith(op, i):
                tokens.append(Token("op", op, i))
                i += len(op)
                break
        else:
            raise CalcError(f"unexpected character {ch!r}", i)
    tokens.append(Token("end", None, len(text)))
    return tokens
