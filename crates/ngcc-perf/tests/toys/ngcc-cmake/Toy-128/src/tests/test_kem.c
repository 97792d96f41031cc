/* A test program (main): never part of the library. */
int main(void)
{
    return 0;
}
