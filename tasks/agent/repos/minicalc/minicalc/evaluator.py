"""Evaluates parsed expressions."""

import math
import operator

from minicalc.errors import CalcError
from minicalc.parser import Binary, Call, Name, Number, Unary, parse

CONSTANTS = {"pi": math.pi, "e": math.e}

FUNCTIONS = {
    "abs": abs,
    "max": max,
    "min": min,
    "round": round,
    "sqrt": math.sqrt,
}

BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
    "**": operator.pow,
}


def _divide(op, left, right):
    if right == 0:
        raise CalcError("division by zero")
    result = BINARY[op](left, right)
    # Keep exact results integral: "6 / 3" is 2, not 2.0.
    if op == "/" and isinstance(left, int) and isinstance(right, int) and left % right == 0:
        return left // right
    return result


def _eval(node, variables):
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Name):
        if node.name in variables:
            return variables[node.name]
        if node.name in CONSTANTS:
            return CONSTANTS[node.name]
        raise CalcError(f"unknown name {node.name!r}")
    if isinstance(node, Unary):
        value = _eval(node.operand, variables)
        return -value if node.op == "-" else value
    if isinstance(node, Binary):
        left = _eval(node.left, variables)
        right = _eval(node.right, variables)
        if node.op in ("/", "%"):
            return _divide(node.op, left, right)
        return BINARY[node.op](left, right)
    if isinstance(node, Call):
        function = FUNCTIONS.get(node.function)
        if function is None:
            raise CalcError(f"unknown function {node.function!r}")
        arguments = [_eval(argument, variables) for argument in node.arguments]
        try:
            return function(*arguments)
        except (TypeError, ValueError) as error:
            raise CalcError(f"{node.function}: {error}") from None
    raise TypeError(f"not an expression node: {node!r}")


def evaluate(text, variables=None):
    """Evaluates the expression `text`; `variables` maps names to numbers."""
    return _eval(parse(text), dict(variables or {}))
