// The header checks' program: every public header compiled in its own TU
// (header_check.cpp.in), linked together, so that `meson test` fails if a
// header does not compile on its own or defines a non-inline symbol that
// two TUs including it would both emit.
int main() { return 0; }
