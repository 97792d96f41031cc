#!/bin/sh
# Toy package (tests only): one script builds every level's KAT program.
set -e
for L in 128 192 256; do
    gcc -O2 -DSECURITY_LEVEL=$L -Icommon -ILoopy-$L common/*.c Loopy-$L/KAT_KEM.c -o Loopy-$L/KAT_KEM_$L
done
