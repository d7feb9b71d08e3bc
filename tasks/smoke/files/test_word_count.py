from solution import word_count


def test_word_count():
    assert word_count("") == {}
    assert word_count("The cat and the hat.") == {"the": 2, "cat": 1, "and": 1, "hat": 1}
    assert word_count("Hello, HELLO; hello!") == {"hello": 3}
    assert word_count("it's 42 o'clock") == {"it": 1, "s": 1, "o": 1, "clock": 1}
