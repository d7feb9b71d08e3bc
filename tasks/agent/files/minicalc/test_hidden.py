import unittest

from minicalc import evaluate, parse
from minicalc.parser import Binary, Number


class HiddenTests(unittest.TestCase):
    def test_subtraction_is_left_associative(self):
        self.assertEqual(evaluate("10 - 4 - 3"), 3)

    def test_mixed_addition_and_subtraction(self):
        self.assertEqual(evaluate("1 - 2 + 3"), 2)
        self.assertEqual(evaluate("2 * 3 - 1 - 1"), 4)

    def test_subtraction_tree(self):
        self.assertEqual(
            parse("1 - 2 - 3"),
            Binary("-", Binary("-", Number(1), Number(2)), Number(3)),
        )

    def test_addition_chain(self):
        self.assertEqual(evaluate("1 + 2 + 3 + 4"), 10)

    def test_division_chain(self):
        self.assertEqual(evaluate("100 / 10 / 2"), 5)

    def test_unary_minus_in_sum(self):
        self.assertEqual(evaluate("-3 + 5"), 2)
