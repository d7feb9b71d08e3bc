"""Recursive-descent parser producing a small tree of nodes.

Grammar, lowest precedence first:

    expression := term (("+" | "-") term)*
    term       := unary (("*" | "/" | "%") unary)*
    unary      := "-" unary | "+" unary | power
    power      := atom ("**" unary)?
    atom       := number | name | name "(" arguments ")" | "(" expression ")"

Binary operators are left-associative except "**", which groups to the right
("2 ** 3 ** 2" is 2 ** 9), and binds tighter than a unary minus on its left
("-2 ** 2" is -4), as in Python.
"""

from dataclasses import dataclass

from minicalc.errors import CalcError
from minicalc.tokenizer import tokenize


@dataclass(frozen=True)
class Number:
    value: object


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Unary:
    op: str
    operand: object


@dataclass(frozen=True)
class Binary:
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Call:
    function: str
    arguments: tuple


class _Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.index = 0

    def peek(self):
        return self.tokens[self.index]

    def advance(self):
        token = self.tokens[self.index]
        self.index += 1
        return token

    def accept(self, *ops):
        token = self.peek()
        if token.kind == "op" and token.value in ops:
            return self.advance()
        return None

    def expect(self, op):
        token = self.peek()
        if not self.accept(op):
            found = "end of input" if token.kind == "end" else repr(token.value)
            raise CalcError(f"expected {op!r}, found {found}", token.position)

    def expression(self):
        left = self.term()
        token = self.accept("+", "-")
        if token:
            right = self.expression()
            return Binary(token.value, left, right)
        return left

    def term(self):
        left = self.unary()
        while True:
            token = self.accept("*", "/", "%")
            if not token:
                return left
            left = Binary(token.value, left, self.unary())

    def unary(self):
        token = self.accept("-", "+")
        if token:
            return Unary(token.value, self.unary())
        return self.power()

    def power(self):
        base = self.atom()
        if self.accept("**"):
            return Binary("**", base, self.unary())
        return base

    def atom(self):
        token = self.advance()
        if token.kind == "number":
            return Number(token.value)
        if token.kind == "name":
            if self.accept("("):
                return Call(token.value, self.arguments())
            return Name(token.value)
        if token.kind == "op" and token.value == "(":
            inner = self.expression()
            self.expect(")")
            return inner
        if token.kind == "end":
            raise CalcError("unexpected end of input", token.position)
        raise CalcError(f"unexpected {token.value!r}", token.position)

    def arguments(self):
        arguments = []
        if self.accept(")"):
            return tuple(arguments)
        while True:
            arguments.append(self.expression())
            if self.accept(")"):
                return tuple(arguments)
            self.expect(",")


def parse(text):
    """Parses `text` into a tree; raises CalcError for malformed input."""
    parser = _Parser(tokenize(text))
    tree = parser.expression()
    token = parser.peek()
    if token.kind != "end":
        raise CalcError(f"unexpected {token.value!r}", token.position)
    return tree
