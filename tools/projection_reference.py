#!/usr/bin/python3
"""The pQRNN projection (docs/projection.md) in plain Python: a second implementation, apart from the C++ one
(nn/projection.h), that proves the features can be reproduced bit for bit from the written algorithm.

Usage: tools/projection_reference.py --features N --seed S TOKEN...
Prints one line per token: the token, a tab, its N features (-1, 0 or 1) separated by spaces.
The token is hashed as its raw bytes (the command line's bytes, UTF-8 on a UTF-8 system), nothing normalised.
Needs python3-xxhash (Debian 12)."""
import argparse
import os
import sys

import xxhash

MAX_FEATURES = 4096
UINT64 = 1 << 64


def project_token(token: bytes, features: int, seed: int) -> list:
    """Feature i: word w = i // 32, h = XXH64(token, seed + w mod 2^64), bits b0 = bit 2p, b1 = bit 2p+1 of h
    (p = i % 32, bit 0 the least significant), feature = b0 - b1."""
    out = []
    for i in range(features):
        w, p = divmod(i, 32)
        h = xxhash.xxh64_intdigest(token, seed=(seed + w) % UINT64)
        b0 = (h >> (2 * p)) & 1
        b1 = (h >> (2 * p + 1)) & 1
        out.append(b0 - b1)
    return out


def main(argv):
    parser = argparse.ArgumentParser(description="pQRNN projection features of tokens (docs/projection.md)")
    parser.add_argument("--features", type=int, required=True, help=f"N, 1..{MAX_FEATURES}")
    parser.add_argument("--seed", type=lambda s: int(s, 0), required=True, help="uint64 seed (decimal or 0x...)")
    parser.add_argument("tokens", nargs="*")
    args = parser.parse_args(argv)
    if not 1 <= args.features <= MAX_FEATURES:
        parser.error(f"--features must be in [1, {MAX_FEATURES}] (got {args.features})")
    if not 0 <= args.seed < UINT64:
        parser.error(f"--seed must be in [0, 2^64-1] (got {args.seed})")
    for token in args.tokens:
        features = project_token(os.fsencode(token), args.features, args.seed)
        print(token + "\t" + " ".join(str(f) for f in features))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
