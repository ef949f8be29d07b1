#!/bin/sh
# train.warmup_steps: the warm-up lasts the longer of warmup_epochs and warmup_steps.  4
# workers, an epoch of 32 steps, lr 0.05 scaled linearly to 0.2: with warmup_steps = 48
# the rate rises for 48 steps (past the one epoch of warmup_epochs), then holds 0.2;
# without it, it reaches 0.2 after 32.
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
set -- train.lr_scaling=linear train.warmup_epochs=1 train.max_steps=60 train.log_every=1
go long "$@" train.warmup_steps=48
go short "$@"
lr() { awk -F, -v s="$2" 'NR > 1 && $1 == s { print $4 }' "$T/$1/train.csv"; }
awk -v a="$(lr long 40)" -v b="$(lr long 50)" -v c="$(lr short 40)" \
	'BEGIN { exit !(a > 0.05 && a < 0.199 && b > 0.1999 && b < 0.2001 && c > 0.1999 && c < 0.2001) }' ||
	fail "lr after 40 and 50 steps: $(lr long 40), $(lr long 50) with warmup_steps = 48; $(lr short 40) without"
