#!/bin/sh
# The key table for programs: `emu help keys --json` is valid JSON (python3's parser) that
# holds every key of `emu help keys --markdown` with its type, default, range or values
# and help, strings escaped (run.output's default is the two characters ""); `emu help
# keys --names` names every override, [net]'s keys again as link A-B.KEY; a bad option
# is refused.  env: EMU, SRCDIR
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "no python3 (scripts/install-deps test installs it)"
"$EMU" help keys --json >"$T/keys.json" || fail "emu help keys --json failed"
"$EMU" help keys --markdown >"$T/keys.md"
"$EMU" help keys --names >"$T/names"
python3 - "$T/keys.json" "$T/keys.md" "$T/names" <<'PY' || fail "the JSON does not match"
import json, sys
keys = json.load(open(sys.argv[1]))        # raises on invalid JSON
rows = [l.split(" | ") for l in open(sys.argv[2]) if l.startswith("| ") and "`" in l]
md = {(r[0].lstrip("| ").replace(" A-B", ""), r[1].strip("`")): r for r in rows}
by = {(k["section"], k["name"]): k for k in keys}
bad = []
if set(by) != set(md):
    bad.append("keys differ from the Markdown table: %s" % (set(by) ^ set(md)))
for (s, n), k in by.items():
    for f in ("sections", "type", "unit", "default", "help"):
        if f not in k:
            bad.append("%s.%s has no %s" % (s, n, f))
    r = md.get((s, n))
    if r and (k["type"] != r[2] or k["help"] != r[6].rstrip(" |\n")):
        bad.append("%s.%s: type or help differs from the table" % (s, n))
    if r and k["default"] is not None and "`%s`" % k["default"] != r[4].replace("(empty)", ""):
        bad.append("%s.%s: default %r, table %s" % (s, n, k["default"], r[4]))
    if k["type"] == "choice" and not k.get("values"):
        bad.append("%s.%s: a choice without values" % (s, n))
    if "min" in k and not (isinstance(k["min"], (int, float)) and k["min"] < k["max"]):
        bad.append("%s.%s: min %r max %r" % (s, n, k.get("min"), k.get("max")))
def want(cond, what):
    if not cond:
        bad.append(what)
want(by[("run", "output")]["default"] == '""', "run.output's default is not the text \"\"")
want(by[("net", "loss")]["values"] == ["none", "bernoulli", "gilbert", "state"], "net.loss values")
want(by[("net", "latency")]["base_unit"] == "ns" and by[("net", "latency")]["max"] == 60e9,
     "net.latency: ns, at most 60 s")
want(by[("net", "ge_r")]["default"] is None and by[("net", "ge_r")]["derived"] == "1 - loss_p",
     "net.ge_r is derived")
want(by[("train", "momentum")]["max_exclusive"] is True, "train.momentum < 1")
want(by[("run", "ring_size")].get("power_of_2") is True, "run.ring_size, a power of 2")
want(by[("run", "ring_size")].get("or_zero") is True, "run.ring_size, or 0 (auto)")
want(by[("net", "mtu")]["sections"] == ["net", "link A-B"], "net keys are link keys too")
want(by[("worker", "slowdown")]["sections"] == ["worker A-B"], "worker keys' section")
names = open(sys.argv[3]).read().split("\n")[:-1]
expect = []
for k in keys:
    s = "worker A-B" if k["section"] == "worker" else k["section"]
    expect.append("%s.%s" % (s, k["name"]))
    if k["section"] == "net":
        expect.append("link A-B.%s" % k["name"])
want(sorted(names) == sorted(expect), "--names: %s" % (set(names) ^ set(expect)))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
rc=0; "$EMU" help keys --bogus >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "unexpected argument '--bogus'" "$T/err" ||
	fail "emu help keys --bogus: exit $rc, $(cat "$T/err")"
echo "$(grep -c '"name"' "$T/keys.json") keys as JSON, $(wc -l <"$T/names") override names"
