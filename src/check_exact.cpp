// The exact checker (check/exact.hpp) for every operator, compiled once for
// qdml's own programs (built with QDML_EXTERN_CHECK_EXACT): the runner's
// --check-exact, the DirectML, exact and fp-state tests, the case fuzzer and
// the Python module called it from their own files, each compiling it again.
#include "qdml/check/exact.hpp"

QDML_INSTANTIATE_CHECK_EXACT()
