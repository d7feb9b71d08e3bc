class CalcError(Exception):
    """A problem with an expression, with the offset (0-based) where it was found."""

    def __init__(self, message, position=None):
        if position is not None:
            message = f"{message} at position {position}"
        super().__init__(message)
        self.position = position
