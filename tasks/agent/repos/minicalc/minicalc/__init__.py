"""minicalc: a small calculator for arithmetic expressions.

    >>> from minicalc import evaluate
    >>> evaluate("2 * (3 + 4)")
    14
    >>> evaluate("price * qty", {"price": 2.5, "qty": 4})
    10.0
"""

from minicalc.errors import CalcError
from minicalc.evaluator import evaluate
from minicalc.parser import parse
from minicalc.tokenizer import tokenize

__all__ = ["CalcError", "evaluate", "parse", "tokenize"]
__version__ = "0.3.1"
