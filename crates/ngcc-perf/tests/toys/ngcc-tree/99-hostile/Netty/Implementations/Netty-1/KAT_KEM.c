/* Stands in for a KAT driver. */
int main(void) { return 0; }
