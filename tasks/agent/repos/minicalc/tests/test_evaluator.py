import math
import unittest

from minicalc import CalcError, evaluate


class EvaluatorTests(unittest.TestCase):
    def test_arithmetic(self):
        self.assertEqual(evaluate("2 + 3 * 4"), 14)
        self.assertEqual(evaluate("(2 + 3) * 4"), 20)
        self.assertEqual(evaluate("7 - 2"), 5)
        self.assertEqual(evaluate("7 % 3"), 1)

    def test_division(self):
        self.assertEqual(evaluate("6 / 3"), 2)
        self.assertIsInstance(evaluate("6 / 3"), int)
        self.assertEqual(evaluate("7 / 2"), 3.5)

    def test_power(self):
        self.assertEqual(evaluate("2 ** 3 ** 2"), 512)
        self.assertEqual(evaluate("-2 ** 2"), -4)
        self.assertEqual(evaluate("2 ** -1"), 0.5)

    def test_variables_and_constants(self):
        self.assertEqual(evaluate("price * qty", {"price": 2.5, "qty": 4}), 10.0)
        self.assertAlmostEqual(evaluate("2 * pi"), 2 * math.pi)

    def test_functions(self):
        self.assertEqual(evaluate("max(1, 5, 3) + abs(-2)"), 7)
        self.assertEqual(evaluate("sqrt(16)"), 4.0)

    def test_errors(self):
        with self.assertRaises(CalcError):
            evaluate("1 / 0")
        with self.assertRaises(CalcError):
            evaluate("unknown + 1")
        with self.assertRaises(CalcError):
            evaluate("nope(1)")
