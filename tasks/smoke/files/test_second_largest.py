from solution import second_largest


def test_second_largest():
    assert second_largest([3, 1, 4, 1, 5, 9, 2, 6]) == 6
    assert second_largest([7, 7, 7]) is None
    assert second_largest([]) is None
    assert second_largest([1, 2]) == 1
    assert second_largest([-5, -1, -1, -3]) == -3
