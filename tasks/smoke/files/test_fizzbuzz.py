from solution import fizzbuzz


def test_fizzbuzz():
    assert fizzbuzz(0) == []
    assert fizzbuzz(5) == ["1", "2", "Fizz", "4", "Buzz"]
    assert fizzbuzz(15)[-1] == "FizzBuzz"
    assert fizzbuzz(15)[8] == "Fizz"
    assert len(fizzbuzz(100)) == 100
