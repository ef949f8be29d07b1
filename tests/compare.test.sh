#!/bin/sh
# emu compare: two runs of one configuration are identical (wall clock left out); a
# different seed or learning rate differs, and the first difference is named; one cell
# moved by a relative 1e-6 passes a larger --tol and fails a smaller one; columns are
# matched by name; columns and rows one side lacks; CRLF line ends; missing, cut and
# malformed files, devices, FIFOs, folders, files over the bound, an --ignore of no column
# and bad arguments exit 2 naming the file (and line) or the argument, printing no report.
# env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
small_ini "$T/s.ini"
opts="train.max_steps=30 train.eval_every=10 net.loss=bernoulli net.loss_p=5%"
# shellcheck disable=SC2086
{
go a $opts
go b $opts
go seed $opts run.seed=8
go lr $opts train.lr=0.06
}

# cmp WANT ARGS...: emu compare ARGS, stdout in $T/out and stderr in $T/err; fails
# unless it exits WANT.  has / err_has TEXT: the output (stderr) says TEXT.
cmp() {
	want=$1; shift
	rc=0
	"$EMU" compare "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ $rc -eq "$want" ] || { cat "$T/out" "$T/err"; fail "emu compare $*: exit $rc, expected $want"; }
	# a refusal prints nothing but why: no partial report to mistake for a whole one
	[ "$want" -ne 2 ] || [ ! -s "$T/out" ] ||
		{ cat "$T/out"; fail "emu compare $*: refused, yet printed a report"; }
}
has() { grep -qF -- "$1" "$T/out" || { cat "$T/out" "$T/err"; fail "no '$1' in emu compare's output"; }; }
err_has() { grep -qF -- "$1" "$T/err" || { cat "$T/out" "$T/err"; fail "no '$1' in emu compare's errors"; }; }
# copy NAME: a copy of run a to edit
copy() { rm -rf "$T/$1"; cp -r "$T/a" "$T/$1"; }
# set_cell FILE ROW COLUMN VALUE: the cell of data row ROW (from 1) in column COLUMN
set_cell() {
	k=$(colnum "$1" "$3")
	awk -F, -v OFS=, -v r="$2" -v k="$k" -v v="$4" 'NR == r + 1 { $k = v } { print }' "$1" \
		>"$1.new" && mv "$1.new" "$1"
}
rows=$(($(wc -l <"$T/a/train.csv") - 1))
[ "$rows" -ge 5 ] || fail "run a logged $rows rows"

# Two runs of one configuration: identical, wall_s left out (it is real time).
cmp 0 "$T/a" "$T/b"
for f in train.csv eval.csv net.csv; do
	grep -q "^$f: [0-9]* rows, [0-9]* columns compared.*identical$" "$T/out" ||
		{ cat "$T/out"; fail "no summary line for $f saying identical"; }
done
has "train.csv: $rows rows, 11 columns compared (left out: wall_s), identical"
[ ! -s "$T/err" ] || fail "emu compare wrote to stderr: $(cat "$T/err")"

# Another seed: the first difference is the loss of the first row, both values given.
cmp 1 "$T/a" "$T/seed"
va=$(col "$T/a/train.csv" loss | head -n 1)
vb=$(col "$T/seed/train.csv" loss | head -n 1)
[ "$va" != "$vb" ] || fail "seeds 7 and 8 gave the same first loss $va"
has "train.csv: first difference at row 1 (line 2, step 5), column loss: $va (A) against $vb (B), relative difference"
has "train.csv: $rows rows, 11 columns compared (left out: wall_s), differs: loss "
has "eval.csv: first difference at row 1"
[ "$(grep -c 'first difference' "$T/out")" -le 3 ] || fail "more than one first difference a file"

# Another learning rate: lr differs on every row, loss too; the first difference is in
# row order, then column order.
cmp 1 "$T/a" "$T/lr"
has "train.csv: first difference at row 1 (line 2, step 5), column loss:"
has "lr 0.167 in $rows rows"	# (0.06 - 0.05) / 0.06
# the same two files given directly
cmp 1 "$T/a/train.csv" "$T/lr/train.csv"
has "train.csv: first difference at row 1 (line 2, step 5), column loss:"
[ "$(wc -l <"$T/out")" -eq 2 ] || { cat "$T/out"; fail "two files: not one difference and one summary"; }

# One cell moved by a relative 1e-6: within --tol 1e-5, not within 1e-7 (nor 0).
copy tol
v=$(col "$T/a/train.csv" loss | sed -n 3p)
v2=$(awk -v v="$v" 'BEGIN { printf "%.12g", v * (1 + 1e-6) }')
set_cell "$T/tol/train.csv" 3 loss "$v2"
cmp 0 --tol 1e-5 "$T/a" "$T/tol"
has "train.csv: $rows rows, 11 columns compared (left out: wall_s), within --tol: loss 1e-06"
has "eval.csv: 3 rows, 7 columns compared (left out: wall_s), identical"
cmp 1 "$T/a" "$T/tol" --tol=1e-7
has "train.csv: first difference at row 3 (line 4, step 15), column loss: $v (A) against $v2 (B), relative difference 1e-06"
has "differs: loss 1e-06 in 1 row"
cmp 1 "$T/a" "$T/tol"
cmp 0 --ignore lr,loss "$T/a" "$T/tol"
has "train.csv: $rows rows, 9 columns compared (left out: loss, lr, wall_s), identical"
# the tolerance is relative to the larger of the two: 2 against 1 is 0.5, -1 against 1 is 2
printf 'x,y\n1,-1\n2,1e300\n' >"$T/p.csv"
printf 'x,y\n2,1\n1,1e300\n' >"$T/q.csv"
cmp 0 --tol 2 "$T/p.csv" "$T/q.csv"
has "p.csv: 2 rows, 2 columns compared, within --tol: x 0.5, y 2"
cmp 1 --tol 0.5 "$T/p.csv" "$T/q.csv"
has "p.csv: first difference at row 1 (line 2), column y: -1 (A) against 1 (B), relative difference 2"
cmp 1 --tol 0.4999 "$T/p.csv" "$T/q.csv"
has "column x: 1 (A) against 2 (B), relative difference 0.5"

# Numbers compare as numbers ("1" is "1.0"); text must be the same text; wall_s never counts.
copy text
set_cell "$T/text/train.csv" 2 bytes_sent "$(col "$T/a/train.csv" bytes_sent | sed -n 2p).0"
set_cell "$T/text/train.csv" 1 wall_s 999.5
cmp 0 "$T/a" "$T/text"
set_cell "$T/text/net.csv" 2 drop_rate none
cmp 1 --tol 1 "$T/a" "$T/text"
has "net.csv: first difference at row 2 (line 3, step $(col "$T/a/net.csv" step | sed -n 3p), src 0, dst 2), column drop_rate:"
has "not comparable as numbers"
has "differs: drop_rate (not numbers) in 1 row"

# Columns by name: another order is the same run.
copy order
awk -F, -v OFS=, '{ t = $1; $1 = $3; $3 = t; print }' "$T/a/net.csv" >"$T/order/net.csv"
cmp 0 "$T/a" "$T/order"
# A column only B has: a difference, unless --allow-new-columns; one only A has always is.
copy new
awk '{ print $0 (NR == 1 ? ",extra" : ",1") }' "$T/a/eval.csv" >"$T/new/eval.csv"
cmp 1 "$T/a" "$T/new"
has "eval.csv: 3 rows, 7 columns compared (left out: wall_s), identical; only in B: extra"
cmp 0 --allow-new-columns "$T/a" "$T/new"
has "new in B (allowed): extra"
cmp 1 --allow-new-columns "$T/new" "$T/a"
has "eval.csv: 3 rows, 7 columns compared (left out: wall_s), identical; only in A: extra"

# Rows: a file cut at a line end is shorter (a difference; the rows both have are
# compared); cut within a line it is malformed (exit 2, its line named).
copy cut
head -n 4 "$T/a/train.csv" >"$T/cut/train.csv"
cmp 1 "$T/a" "$T/cut"
has "train.csv: 3 rows, 11 columns compared (left out: wall_s), identical; B is shorter (3 rows against $rows)"
cmp 1 "$T/cut" "$T/a"
has "A is shorter (3 rows against $rows)"
head -c -7 "$T/a/train.csv" >"$T/cut/train.csv"
cmp 2 "$T/a" "$T/cut"
err_has "emu compare: $T/cut/train.csv:$((rows + 1)): a row cut short"
awk -F, -v OFS=, 'NR == 3 { NF = 4 } { print }' "$T/a/net.csv" >"$T/cut/net.csv"
cmp 2 "$T/cut" "$T/a"
err_has "emu compare: $T/cut/net.csv:3: a row cut short or with another number of fields"
: >"$T/cut/eval.csv"
cmp 2 "$T/a" "$T/cut"
err_has "emu compare: $T/cut/eval.csv:1: no header line"
# a zero-filled tail (what a crash can leave): refused at its line, not read as the end
copy nul
{ cat "$T/a/eval.csv"; printf '\0\0\0\0'; } >"$T/nul/eval.csv"
cmp 2 "$T/a" "$T/nul"
err_has "emu compare: $T/nul/eval.csv:$(($(wc -l <"$T/a/eval.csv") + 1)): a row cut short"
sed '1s/lr/loss/' "$T/a/train.csv" >"$T/cut/train.csv"
cmp 2 "$T/a/train.csv" "$T/cut/train.csv"
err_has "$T/cut/train.csv:1: column 'loss' appears twice"

# Every malformed file is named, not only the first.
copy bad2
head -c -7 "$T/a/train.csv" >"$T/bad2/train.csv"
head -c -3 "$T/a/net.csv" >"$T/bad2/net.csv"
cmp 2 "$T/a" "$T/bad2"
err_has "$T/bad2/train.csv:$((rows + 1)): a row cut short"
err_has "$T/bad2/net.csv:"

# A byte order mark (a file saved by a spreadsheet) is skipped; a column without a name
# is refused at line 1.
{ printf '\357\273\277'; cat "$T/a/eval.csv"; } >"$T/bom.csv"
cmp 0 "$T/bom.csv" "$T/a/eval.csv"
{ printf ',x\n1,2\n'; } >"$T/noname.csv"
cmp 2 "$T/noname.csv" "$T/noname.csv"
err_has "emu compare: $T/noname.csv:1: no header line (or one cut short, or a column without a name)"
# 10^5 columns compare in well under the guard (columns are looked up by name in a
# sorted index, not by a scan per column)
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "%sc%d", i ? "," : "", i; print "";
	for (i = 0; i < 100000; i++) printf "%s%d", i ? "," : "", i; print "" }' >"$T/wide.csv"
awk -F, -v OFS=, 'NR == 2 { $77778 = 7 } { print }' "$T/wide.csv" >"$T/wide2.csv"
rc=0; timeout 20 "$EMU" compare "$T/wide.csv" "$T/wide.csv" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "10^5 columns, identical: exit $rc (124: it took over 20 s)"
rc=0; timeout 20 "$EMU" compare "$T/wide.csv" "$T/wide2.csv" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 1 ] || fail "10^5 columns, one differs: exit $rc, expected 1 (124: over 20 s)"
has "c77777"

# CRLF line ends (a file that passed through a Windows editor) read as LF ones.
copy crlf
for f in train.csv eval.csv net.csv; do sed 's/$/\r/' "$T/a/$f" >"$T/crlf/$f"; done
grep -q "$(printf '\r')" "$T/crlf/train.csv" || fail "sed wrote no CRLF"
cmp 0 "$T/a" "$T/crlf"
has "train.csv: $rows rows, 11 columns compared (left out: wall_s), identical"
cmp 0 "$T/crlf/eval.csv" "$T/a/eval.csv"

# --ignore of a column no file has is refused (a misspelt name would leave out nothing);
# every --ignore counts.
cmp 2 --ignore lr,los "$T/a" "$T/tol"
err_has "emu compare: --ignore los: no column 'los' in $T/a/train.csv or $T/tol/train.csv,"
err_has "$T/a/net.csv or $T/tol/net.csv"
cmp 2 --ignore= "$T/a/train.csv" "$T/tol/train.csv"
err_has "no column '' in $T/a/train.csv or $T/tol/train.csv"
cmp 0 --ignore lr --ignore loss "$T/a" "$T/tol"
has "train.csv: $rows rows, 9 columns compared (left out: loss, lr, wall_s), identical"
cmp 0 --ignore src "$T/a" "$T/b"	# a column of net.csv only

# What is not a regular file is refused at once, naming it and what it is: a device
# (/dev/zero never ends: the reader grew without bound), a FIFO (an open waits for a
# writer for ever), a folder where a run's file should be.  A guard of 20 s and 1 GiB.
guarded() { (mem_limit 1048576; timeout 20 "$EMU" compare "$@") >"$T/out" 2>"$T/err"; }
rc=0; guarded /dev/zero "$T/a/train.csv" || rc=$?
[ $rc -eq 2 ] || fail "emu compare /dev/zero: exit $rc, expected 2 ($(cat "$T/err"))"
err_has "emu compare: /dev/zero: not a regular file (a character device)"
mkfifo "$T/fifo.csv"
rc=0; guarded "$T/a/train.csv" "$T/fifo.csv" || rc=$?
[ $rc -eq 2 ] || fail "emu compare FIFO: exit $rc, expected 2 ($(cat "$T/err"))"
err_has "emu compare: $T/fifo.csv: not a regular file (a FIFO)"
copy dir
rm "$T/dir/eval.csv" && mkdir "$T/dir/eval.csv"
cmp 2 "$T/a" "$T/dir"
err_has "emu compare: $T/dir/eval.csv: not a regular file (a directory)"
# a file over the bound of 1 GiB, sparse: refused from its size, naming the bound
truncate -s $((1024 * 1024 * 1024 + 1)) "$T/big.csv"
rc=0; guarded "$T/big.csv" "$T/a/train.csv" || rc=$?
[ $rc -eq 2 ] || fail "emu compare of 1 GiB + 1 byte: exit $rc, expected 2 ($(cat "$T/err"))"
err_has "emu compare: $T/big.csv: longer than 1073741824 bytes"
rm -f "$T/big.csv"

# A missing file or folder.
copy miss
rm "$T/miss/net.csv"
cmp 2 "$T/a" "$T/miss"
err_has "emu compare: $T/miss/net.csv: No such file or directory"
cmp 2 "$T/a" "$T/nowhere"
err_has "emu compare: $T/nowhere: No such file or directory"
cmp 2 "$T/a/x.csv" "$T/b/x.csv"
err_has "emu compare: $T/a/x.csv: No such file or directory"
cmp 2 "$T/a" "$T/b/train.csv"
err_has "emu compare: $T/a is a folder and $T/b/train.csv is not"

# Bad arguments: exit 2, the argument named, nothing compared.
cmp 2
err_has "emu compare: missing runs A and B"
cmp 2 "$T/a"
err_has "emu compare: missing run B"
cmp 2 "$T/a" "$T/b" "$T/seed"
err_has "argument 4 ($T/seed): a third run"
cmp 2 --tol abc "$T/a" "$T/b"
err_has "argument 3 (--tol abc): not a relative tolerance"
cmp 2 "$T/a" "$T/b" --tol=-1
err_has "argument 4 (--tol -1): not a relative tolerance"
cmp 2 "$T/a" "$T/b" --tol
err_has "argument 4 (--tol): missing value"
cmp 2 --tol nan "$T/a" "$T/b"
cmp 2 --frobnicate "$T/a" "$T/b"
err_has "emu compare: unknown option '--frobnicate' (argument 2)"
[ ! -s "$T/out" ] || fail "bad arguments, yet emu compare printed: $(cat "$T/out")"
# (a folder whose name starts with '-' after --)
cp -r "$T/a" "$T/-x"
(cd "$T" && "$EMU" compare -- a -x >/dev/null) || fail "emu compare -- a -x"

# Help.
cmp 0 --help
has "usage: emu compare"
"$EMU" help compare | grep -q "^usage: emu compare" || fail "emu help compare"
"$EMU" --help | grep -q "emu compare" || fail "emu --help does not list compare"
echo "compare: identical, different, --tol, columns, rows and bad input as expected"
