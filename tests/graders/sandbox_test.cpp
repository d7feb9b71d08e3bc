#include <catch2/catch.hpp>
#include "graders/sandbox.h"
TEST_CASE("placeholder") {}
