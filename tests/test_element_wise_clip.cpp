#include <catch2/catch.hpp>

#include "qdml/qdml.hpp"
