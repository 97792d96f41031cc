/* Hostile toy (tests only): library code of the KAT program. */
int escape_toy(int x);
int escape_toy(int x) { return x + 1; }
