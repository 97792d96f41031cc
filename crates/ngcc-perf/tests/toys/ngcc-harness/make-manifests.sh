#!/bin/sh
# Computes the toy packages' kat.sha256 once, with the official ICCS KAT driver and DRNG
# (third-party: read from the NGCC corpus, never copied here) over each toy instance's own
# library sources, built by hand with its level. Run from this folder:
#   sh make-manifests.sh ../../../../../../shared/ngcc-r1/iccs-api
# The digests are facts about our toy code; the importer must reach them from the packages'
# own builds alone.
set -eu
API=$(cd "$1" && pwd)
TREE=$(cd ../ngcc-tree && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() { # id label level flags sources…
    id=$1 label=$2 level=$3 flags=$4
    shift 4
    rm -rf "$work/b" && mkdir -p "$work/b"
    # The official drng.h first: the driver and the toy code see the same context type.
    gcc -O2 $flags -DSECURITY_LEVEL="$level" -I"$API" "$@" "$API/KAT_KEM.c" "$API/drng.c" -o "$work/b/kat"
    (cd "$work/b" && ./kat >/dev/null)
    mkdir -p "$id"
    for f in "$work"/b/output/*.txt; do
        # The manifests' canonical form: no trailing blanks or CRs, no empty lines.
        sum=$(sed -e 's/[[:space:]]*$//' "$f" | grep -v '^$' | sha256sum | cut -d' ' -f1)
        printf '%s strict %s/%s\n' "$sum" "$label" "$(basename "$f")" >>"$id/kat.sha256.new"
    done
}
for id in toy-cmk toy-mkw toy-loopy toy-outy toy-owny toy-inly toy-recy; do rm -f "$id/kat.sha256.new"; done
for L in 128 256; do
    d="$TREE/01-kem/Cmk/Implementations/Reference/Cmk-$L/src"
    one toy-cmk "Cmk-$L" "$L" "" -I"$d/api" -I"$d/core" -I"$d/sym" "$d"/core/*.c "$d"/sym/*.c
done
for L in 128 192; do
    d="$TREE/01-kem/Mkw/Implementations/Reference_Implementation/Mkw-$L"
    one toy-mkw "Mkw-$L" "$L" "" -I"$d" -I"$d/src/core" -I"$d/src/sym" "$d"/src/*/*.c
done
for L in 128 192 256; do
    d="$TREE/02-kem/Loopy/Reference_Implementation"
    one toy-loopy "Loopy-$L" "$L" "" -I"$d/Loopy-$L" -I"$d/common" "$d"/common/*.c
done
d="$TREE/03-kem/Outy/Implementations/Outy-128/src"
one toy-outy Outy-128 128 "" -I"$d" "$d/kem.c" "$d/mix.c" "$d/toy_rand.c"
# Owny defines drng_algorithm itself, as the official driver does: one common symbol.
d="$TREE/04-kem/Owny/Implementations/Reference_Implementation/Owny-128"
one toy-owny Owny-128 128 "-fcommon" -I"$d" "$d/kem.c" "$d/mix.c" "$d/toy_rand.c"
# Inly needs gnu89 inline semantics, as its own build gives it.
d="$TREE/05-kem/Inly/Implementations/Reference_Implementation/Inly-128"
one toy-inly Inly-128 128 "-fgnu89-inline" -I"$d" "$d/kem.c" "$d/mix.c" "$d/toy_rand.c"
# The layout added after the importer was written (../ngcc-unseen).
d="$(cd ../ngcc-unseen && pwd)/Recy/Implementations/Reference_Implementation/Recy-128/lib"
one toy-recy Recy-128 128 "" -I"$d/.." -I"$d/kem" -I"$d/rng" "$d"/*/*.c
for id in toy-cmk toy-mkw toy-loopy toy-outy toy-owny toy-inly toy-recy; do mv "$id/kat.sha256.new" "$id/kat.sha256"; done
