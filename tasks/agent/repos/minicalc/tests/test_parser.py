import unittest

from minicalc import CalcError, parse
from minicalc.parser import Binary, Call, Name, Number, Unary


class ParserTests(unittest.TestCase):
    def test_multiplication_binds_tighter_than_addition(self):
        self.assertEqual(
            parse("1 + 2 * 3"),
            Binary("+", Number(1), Binary("*", Number(2), Number(3))),
        )

    def test_parentheses(self):
        self.assertEqual(
            parse("(1 + 2) * 3"),
            Binary("*", Binary("+", Number(1), Number(2)), Number(3)),
        )

    def test_unary_minus_and_power(self):
        self.assertEqual(
            parse("-x ** 2"), Unary("-", Binary("**", Name("x"), Number(2)))
        )

    def test_division_is_left_associative(self):
        self.assertEqual(
            parse("8 / 4 / 2"),
            Binary("/", Binary("/", Number(8), Number(4)), Number(2)),
        )

    def test_call_with_arguments(self):
        self.assertEqual(
            parse("max(1, y)"), Call("max", (Number(1), Name("y")))
        )

    def test_errors(self):
        for text, message in [
            ("1 +", "unexpected end of input at position 3"),
            ("(1 + 2", "expected ')', found end of input at position 6"),
            ("1 2", "unexpected 2 at position 2"),
        ]:
            with self.subTest(text=text):
                with self.assertRaises(CalcError) as caught:
                    parse(text)
                self.assertEqual(str(caught.exception), message)
