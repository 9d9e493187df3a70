// placeholder: replaced by the case runner
int main() { return 0; }
