#include <qdml/qdml.hpp>
int main() { return qdml::quantize<std::uint8_t>(2.5f, 0) == 2 ? 0 : 1; }
