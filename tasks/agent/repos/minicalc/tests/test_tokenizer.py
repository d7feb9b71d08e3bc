import unittest

from minicalc import CalcError, tokenize


def kinds_and_values(text):
    return [(t.kind, t.value) for t in tokenize(text)]


class TokenizerTests(unittest.TestCase):
    def test_numbers_and_operators(self):
        self.assertEqual(
            kinds_and_values("12 + 3.5*x"),
            [("number", 12), ("op", "+"), ("number", 3.5), ("op", "*"),
             ("name", "x"), ("end", None)],
        )

    def test_power_is_one_token(self):
        self.assertEqual(kinds_and_values("2**3")[1], ("op", "**"))

    def test_leading_dot_number(self):
        self.assertEqual(kinds_and_values(".5")[0], ("number", 0.5))

    def test_positions(self):
        self.assertEqual([t.position for t in tokenize(" a + 10")], [1, 3, 5, 7])

    def test_bad_character(self):
        with self.assertRaises(CalcError) as caught:
            tokenize("2 $ 3")
        self.assertEqual(str(caught.exception), "unexpected character '$' at position 2")

    def test_malformed_number(self):
        with self.assertRaises(CalcError):
            tokenize("1.2.3")
